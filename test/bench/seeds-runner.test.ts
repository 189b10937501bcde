/**
 * The bench:seeds runner (bench/seeds.ts): it finds every system module in a folder, rejects a module whose default
 * export is not a SeedSystem, and selects systems by name with a clear error for an unknown one.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSystems, selectSystems } from "../../bench/seeds.js";
import type { SeedSystem } from "../../bench/seeds/types.js";

const sys = (name: string): SeedSystem => ({ name, claim: `${name} helps`, run: async () => {} });

describe("bench:seeds runner", () => {
  it("loads every module of the folder except types.ts and tests, in name order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "seeds-"));
    const mod = (name: string) => `export default { name: "${name}", claim: "c", run: async () => {} };\n`;
    writeFileSync(join(dir, "zeta.ts"), mod("zeta"));
    writeFileSync(join(dir, "alpha.ts"), mod("alpha"));
    writeFileSync(join(dir, "types.ts"), "export {};\n");
    writeFileSync(join(dir, "alpha.test.ts"), "throw new Error('a test must not be loaded');\n");
    const names = (await loadSystems(dir)).map((s) => s.name);
    expect(names).toEqual(["alpha", "zeta"]);
  });

  it("rejects a module whose default export is not a SeedSystem, naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "seeds-"));
    writeFileSync(join(dir, "broken.ts"), "export default { name: 'broken' };\n");
    await expect(loadSystems(dir)).rejects.toThrow(/broken\.ts.*not a SeedSystem/);
  });

  it("selects by name in the order asked, all when none, and names the known systems on a typo", () => {
    const all = [sys("openrs"), sys("sirl"), sys("exgrpo")];
    expect(selectSystems(all, []).map((s) => s.name)).toEqual(["openrs", "sirl", "exgrpo"]);
    expect(selectSystems(all, ["exgrpo", "openrs"]).map((s) => s.name)).toEqual(["exgrpo", "openrs"]);
    expect(() => selectSystems(all, ["sirll"])).toThrow(/unknown system "sirll"; known: openrs, sirl, exgrpo/);
  });
});
