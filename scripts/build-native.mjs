// Builds the native addon (native/ via node-gyp) during `npm ci`. A failed build never fails the install:
// rlvr then runs on the pure-TypeScript backend and says so once at start-up.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
if (!existsSync(join(root, "binding.gyp"))) process.exit(0);
const gyp = process.env.npm_config_node_gyp;
const cmd = gyp ? [process.execPath, [gyp, "rebuild", "--release"]] : ["npx", ["--no-install", "node-gyp", "rebuild", "--release"]];
const r = spawnSync(cmd[0], cmd[1], { cwd: root, stdio: "inherit" });
if (r.status !== 0) {
  console.warn("rlvr: the native addon did not build; the pure-TypeScript backend will be used.");
}
process.exit(0);
