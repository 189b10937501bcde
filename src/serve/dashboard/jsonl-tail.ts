/**
 * Reading a JSONL file that another process is appending to (a run's metrics.jsonl while it trains). Only complete
 * lines are parsed: a half-written last line (the writer is mid-append, or was killed mid-line) is left for the next
 * read, so the dashboard renders whatever is complete. A complete line that is not JSON is skipped and counted. The
 * trainer rewrites the file on resume (`RunDir.truncateAfter`, an atomic rename); a new inode or a shorter file is
 * reported as a reset and read again from the start.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";

/** What one read found: the new records, whether earlier ones are void (file replaced), and what was skipped. */
export interface TailRead {
  records: Record<string, unknown>[];
  /** The file was replaced, shortened or removed: drop what earlier reads returned. */
  reset: boolean;
  /** Complete lines that were not a JSON object, in this read. */
  skipped: number;
  /** Bytes of an unfinished last line waiting for its newline. */
  pendingBytes: number;
}

const NEWLINE = 0x0a;

/** Follows one JSONL file from its start; call `read()` whenever new lines may have landed. */
export class JsonlTail {
  private offset = 0;
  private inode: number | null = null;

  constructor(readonly path: string) {}

  /** Complete lines appended since the previous read (all of them on the first). */
  read(): TailRead {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      const reset = this.inode !== null;
      this.offset = 0;
      this.inode = null;
      return { records: [], reset, skipped: 0, pendingBytes: 0 };
    }
    try {
      const st = fstatSync(fd);
      let reset = false;
      if ((this.inode !== null && st.ino !== this.inode) || st.size < this.offset) {
        reset = this.offset > 0 || this.inode !== null;
        this.offset = 0;
      }
      this.inode = st.ino;
      const size = st.size - this.offset;
      if (size === 0) return { records: [], reset, skipped: 0, pendingBytes: 0 };
      const buf = Buffer.alloc(size);
      let got = 0;
      while (got < size) {
        const n = readSync(fd, buf, got, size - got, this.offset + got);
        if (n === 0) break;
        got += n;
      }
      // Cut at the last newline: bytes after it are a line still being written.
      const end = buf.subarray(0, got).lastIndexOf(NEWLINE) + 1;
      const { records, skipped } = parseLines(buf.subarray(0, end).toString("utf8"));
      this.offset += end;
      return { records, reset, skipped, pendingBytes: got - end };
    } finally {
      closeSync(fd);
    }
  }
}

/** Parses complete JSONL text; blank lines are ignored, lines that are not a JSON object are counted. */
export function parseLines(text: string): { records: Record<string, unknown>[]; skipped: number } {
  const records: Record<string, unknown>[] = [];
  let skipped = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const v: unknown = JSON.parse(line);
      if (v !== null && typeof v === "object" && !Array.isArray(v)) records.push(v as Record<string, unknown>);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { records, skipped };
}

/** Modification time and size of a file, or null when it does not exist (cache keys). */
export function fileStamp(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}
