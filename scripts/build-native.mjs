// Builds the native addon (native/ via node-gyp, binding.gyp) during `npm ci` and `npm run build:native`.
// A failed build never fails the install: rlvr then runs on the pure-TypeScript backend and says so once.
// Works offline: node-gyp is pointed at the running Node's own headers when they are installed beside it,
// so it never needs to download them. RLVR_SKIP_NATIVE=1 skips the build. RLVR_REQUIRE_NATIVE=1 (set by .ci/run)
// makes a failed build fail the install instead, so CI can never pass without testing the backend everyone uses.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const required = process.env.RLVR_REQUIRE_NATIVE === "1";
const warn = (why) => {
  if (required) {
    console.error(`rlvr: the native addon was not built (${why}), and RLVR_REQUIRE_NATIVE=1 requires it.`);
    process.exit(1);
  }
  console.warn(`rlvr: the native addon was not built (${why}); the pure-TypeScript backend will be used.`);
  process.exit(0);
};

if (!existsSync(join(root, "binding.gyp"))) process.exit(0);
if (process.env.RLVR_SKIP_NATIVE === "1" && !required) warn("RLVR_SKIP_NATIVE=1");
if (process.arch !== "x64") warn(`the kernels need x86-64 with AVX2/FMA, this is ${process.arch}`);

// node-gyp: the one npm runs install scripts with, else npm's bundled copy, else a local/global install.
const prefix = dirname(dirname(process.execPath));
const candidates = [
  process.env.npm_config_node_gyp,
  join(prefix, "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"),
  join(dirname(process.execPath), "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"),
  join(root, "node_modules", "node-gyp", "bin", "node-gyp.js"),
].filter((p) => p && existsSync(p));
const args = ["rebuild", "--release", "-j", "max"];
// Headers of the running Node, when installed beside it (Debian/NodeSource/official tarballs all do).
if (!process.env.npm_config_nodedir && existsSync(join(prefix, "include", "node", "node_api.h")))
  args.push(`--nodedir=${prefix}`);
const cmd = candidates.length > 0 ? [process.execPath, [candidates[0], ...args]] : ["node-gyp", args];
const started = Date.now();
const r = spawnSync(cmd[0], cmd[1], { cwd: root, stdio: "inherit" });
if (r.error) warn(`could not run node-gyp: ${r.error.message}`);
if (r.status !== 0) warn(`node-gyp exited with status ${r.status}`);
console.log(
  `rlvr: native addon built in ${((Date.now() - started) / 1000).toFixed(1)} s (build/Release/rlvr_native.node)`,
);
process.exit(0);
