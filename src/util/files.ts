/**
 * Atomic file writes and JSON Lines I/O. A checkpoint or metrics file is either the old version or the new one,
 * never half of each: we write to a temporary file in the same directory, fsync it, rename it over the target,
 * and fsync the directory so the rename itself survives a crash.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, basename, join, resolve } from "node:path";

/**
 * Creates `dir` and its missing parents, one level at a time. Node 20's `mkdirSync(dir, { recursive: true })` loops
 * for ever on some paths (e.g. under /proc, where mkdir answers ENOENT although the parent exists); here every
 * refusal is thrown as the system error it is.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    let isDir: boolean | null = null;
    try {
      isDir = statSync(d).isDirectory();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    if (isDir === false) {
      const err = new Error(`ENOTDIR: not a directory, mkdir '${d}'`);
      throw Object.assign(err, { code: "ENOTDIR", syscall: "mkdir", path: d });
    }
    if (isDir) break;
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(d).isDirectory()) throw err;
    }
  }
}

/** Writes `data` to `path` atomically (write, fsync, rename, fsync dir). Creates parent directories. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const dir = dirname(path);
  makeDirs(dir);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const fd = openSync(tmp, "w");
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(dir);
}

/** fsyncs a directory so that a rename inside it is durable. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Appends one JSON object as a line. */
export function appendJsonl(path: string, record: unknown): void {
  makeDirs(dirname(path));
  appendFileSync(path, JSON.stringify(record) + "\n");
}

/** Reads a JSON Lines file; a torn last line (from a crash mid-append) is ignored, any other bad line throws. */
export function readJsonl<T = unknown>(path: string): T[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, "utf8").split("\n");
  const out: T[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch (err) {
      if (i >= lines.length - 2) break; // torn final line
      throw new Error(`${path}:${i + 1}: invalid JSON line`, { cause: err });
    }
  }
  return out;
}
