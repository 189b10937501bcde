/**
 * The flag helpers shared by the service commands (src/cli/schema-flags.ts): flag strings to option values, and
 * help text with each field's description and parsed default.
 */
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { addSchemaFlags, flagValues } from "../../src/cli/schema-flags.js";

const TABLE = [
  ["port", "--port <n>"],
  ["host", "--host <address>"],
  ["token", "--token <token>"],
] as const;
const SHAPE = {
  port: z.number().int().default(8765).describe("TCP port"),
  host: z.string().default("127.0.0.1").describe("address to bind"),
  token: z.string().optional().describe("bearer token"),
};

describe("flagValues", () => {
  it("keeps text keys as strings, turns the others into numbers, and leaves absent flags out", () => {
    expect(flagValues({ port: "9000", host: "0.0.0.0" }, TABLE, new Set(["host", "token"]))).toEqual({
      port: 9000,
      host: "0.0.0.0",
    });
    expect(flagValues({}, TABLE, new Set())).toEqual({});
  });

  it("an empty or non-numeric number becomes NaN, so the schema rejects it naming the field", () => {
    const out = flagValues({ port: " ", host: "x" }, TABLE, new Set(["host"]));
    expect(Number.isNaN(out.port)).toBe(true);
    expect(Number.isNaN(flagValues({ port: "12ab" }, TABLE, new Set()).port)).toBe(true);
    expect(() => z.object(SHAPE).parse(out)).toThrow(/port/);
  });
});

describe("addSchemaFlags", () => {
  it("describes each flag by its field, with the default it parses to unless told not to", () => {
    const cmd = new Command("x");
    addSchemaFlags(cmd, TABLE, SHAPE, new Set(["token"]));
    const help = cmd.helpInformation();
    expect(help).toContain("--port <n>");
    expect(help).toContain("TCP port (default 8765)");
    expect(help).toContain('address to bind (default "127.0.0.1")');
    expect(help).toMatch(/bearer token\s*$/m);
  });

  it("throws on a flag whose key the schema lacks", () => {
    expect(() => addSchemaFlags(new Command("x"), [["nope", "--nope <n>"]], SHAPE)).toThrow(/no field "nope"/);
  });
});
