/**
 * Recursive-descent parser for maths answers written in LaTeX or plain text (one grammar for both; tokens from
 * tokenize.ts). It reads a literal grammar only (G4): numbers, symbols, + - * / ^, implicit products, \frac, \sqrt,
 * \binom, functions, |x|, floor/ceil, factorial, percent, ±, sets, tuples and intervals, unions, relation chains and
 * matrices; `{a \over b}`, `\int_a^b f\,dx`, `\lim_{x\to a^\pm} f`, `\det`/`vmatrix`/`|M|`. At most MAX_NODES nodes
 * and MAX_DEPTH nesting (more is "unparseable"). Text/choice detection happens before (normalize.ts).
 */
import { MathParseFail, type MathNode, rat } from "./ast.js";
import { differentialAt, numberToken, takeLimitSubscript, tokenize, type Tok } from "./tokenize.js";

const MAX_NODES = 5_000;
const MAX_DEPTH = 120;

const REL_OPS = new Set(["=", "<", ">", "<=", ">=", "!=", "in"]);

/** Recursive-descent parser over the token list. */
class Parser {
  private i = 0;
  private nodes = 0;
  private depth = 0;
  /** > 0 inside an integrand: an implicit product stops at the differential `dx`. */
  private inIntegrand = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private isOp(v: string): boolean {
    const t = this.toks[this.i];
    return t !== undefined && t.t === "op" && t.v === v;
  }
  private node<T extends MathNode>(n: T): T {
    if (++this.nodes > MAX_NODES) throw new MathParseFail("expression too large");
    return n;
  }
  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new MathParseFail("nesting too deep");
  }
  private expectClose(...vs: string[]): string {
    const t = this.toks[this.i];
    if (!t || t.t !== "close" || !vs.includes(t.v)) throw new MathParseFail(`expected ${vs.join(" or ")}`);
    this.i++;
    return t.v;
  }

  parseTop(): MathNode {
    const items = [this.parseOver()];
    while (this.isOp(",") || this.isOp(";")) {
      this.i++;
      items.push(this.parseOver());
    }
    if (this.i < this.toks.length) throw new MathParseFail("trailing tokens");
    return items.length > 1 ? this.node({ k: "list", items }) : items[0]!;
  }

  /** TeX's `a \over b`: everything before and after it in the enclosing group. */
  private parseOver(): MathNode {
    const a = this.parseRel();
    if (!this.isOp("over")) return a;
    this.i++;
    return this.node({ k: "div", a, b: this.parseRel() });
  }

  /** `\int_lo^hi body dx` (the cursor is after `\int`); both limits are required, in either order. */
  private parseIntegral(): MathNode {
    const lim: Record<string, MathNode> = {};
    for (let t = this.peek(); t?.t === "op" && (t.v === "_" || t.v === "^") && !lim[t.v]; t = this.peek()) {
      this.i++;
      lim[t.v] = this.parseArg();
    }
    if (!lim["_"] || !lim["^"]) throw new MathParseFail("an integral needs both limits");
    this.inIntegrand++;
    const body = differentialAt(this.toks, this.i) ? this.node({ k: "num", v: rat(1n), dec: false }) : this.parseAdd();
    this.inIntegrand--; // a parse failure abandons the whole parser, so no finally is needed
    const n = differentialAt(this.toks, this.i);
    if (!n) throw new MathParseFail("an integral needs its differential");
    const v = (this.toks[this.i + n - 1] as { v: string }).v;
    this.i += n;
    return this.node({ k: "int", v, body, lo: lim["_"], hi: lim["^"] });
  }

  /** `\lim_{x \to a} body`, with `a^+` / `a^-` for one side (the cursor is after `\lim`). */
  private parseLimit(): MathNode {
    const { v, side, next } = takeLimitSubscript(this.toks, this.i);
    this.i = next;
    const to = this.parseAdd();
    this.expectClose("}");
    return this.node({ k: "lim", v, to, side, body: this.parseMul(false) });
  }

  private parseRel(): MathNode {
    const first = this.parseUnion();
    const items = [first];
    const ops: string[] = [];
    for (let t = this.peek(); t && t.t === "op" && REL_OPS.has(t.v); t = this.peek()) {
      this.i++;
      ops.push(t.v);
      items.push(this.parseUnion());
    }
    return ops.length ? this.node({ k: "rel", items, ops }) : first;
  }

  private parseUnion(): MathNode {
    const first = this.parseAdd();
    if (!this.isOp("cup")) return first;
    const parts = [first];
    while (this.isOp("cup")) {
      this.i++;
      parts.push(this.parseAdd());
    }
    return this.node({ k: "union", parts });
  }

  private parseAdd(): MathNode {
    let acc: MathNode[] = [this.parseMul(true)];
    for (;;) {
      if (this.isOp("+")) {
        this.i++;
        acc.push(this.parseMul(false));
      } else if (this.isOp("-")) {
        this.i++;
        acc.push(this.node({ k: "neg", a: this.parseMul(false) }));
      } else if (this.isOp("pm") || this.isOp("mp")) {
        this.i++;
        const a = acc.length === 1 ? acc[0]! : this.node({ k: "add", args: acc });
        acc = [this.node({ k: "pm", a, b: this.parseMul(false) })];
      } else break;
    }
    return acc.length === 1 ? acc[0]! : this.node({ k: "add", args: acc });
  }

  private parseMul(allowUnary: boolean): MathNode {
    let a = allowUnary ? this.parseUnary() : this.parseUnaryNoPm();
    for (;;) {
      if (this.isOp("*")) {
        this.i++;
        a = this.mul(a, this.parseUnaryNoPm());
      } else if (this.isOp("/")) {
        this.i++;
        a = this.node({ k: "div", a, b: this.parseUnaryNoPm() });
      } else if (this.isOp("choose")) {
        this.i++;
        a = this.node({ k: "fn", name: "binom", args: [a, this.parsePower()] });
      } else if (this.startsPrimary(this.peek()) && !(this.inIntegrand && differentialAt(this.toks, this.i))) {
        a = this.mul(a, this.parsePower());
      } else return a;
    }
  }

  private mul(a: MathNode, b: MathNode): MathNode {
    return this.node({ k: "mul", args: a.k === "mul" ? [...a.args, b] : [a, b] });
  }

  private parseUnary(): MathNode {
    if (this.isOp("pm") || this.isOp("mp")) {
      this.i++;
      return this.node({ k: "pm", a: null, b: this.parseUnaryNoPm() });
    }
    return this.parseUnaryNoPm();
  }

  private parseUnaryNoPm(): MathNode {
    this.enter();
    try {
      if (this.isOp("-")) {
        this.i++;
        return this.node({ k: "neg", a: this.parseUnaryNoPm() });
      }
      if (this.isOp("+")) {
        this.i++;
        return this.parseUnaryNoPm();
      }
      return this.parsePower();
    } finally {
      this.depth--;
    }
  }

  private parsePower(): MathNode {
    this.enter();
    try {
      const base = this.parsePostfix();
      if (!this.isOp("^")) return base;
      this.i++;
      const exp = this.parsePowerArg();
      return this.postfix(this.node({ k: "pow", a: base, b: exp }));
    } finally {
      this.depth--;
    }
  }

  private parsePowerArg(): MathNode {
    const t = this.peek();
    if (t?.t === "open" && t.v === "{") return this.parseGroupArg();
    if (this.isOp("-")) {
      this.i++;
      return this.node({ k: "neg", a: this.parsePower() });
    }
    return this.parsePower();
  }

  private parseGroupArg(): MathNode {
    this.i++; // {
    const inner = this.parseOver();
    this.expectClose("}");
    return inner;
  }

  /** A LaTeX macro argument: a braced group, a single digit, or one primary. */
  private parseArg(): MathNode {
    const t = this.peek();
    if (!t) throw new MathParseFail("missing argument");
    if (t.t === "open" && t.v === "{") return this.parseGroupArg();
    if (t.t === "num" && t.raw.length > 1 && !t.dec) {
      this.toks[this.i] = numberToken(t.raw.slice(1), "", 0);
      return this.node({ k: "num", v: rat(BigInt(t.raw[0]!)), dec: false });
    }
    return this.parsePostfixNoFact();
  }

  private postfix(a: MathNode): MathNode {
    for (;;) {
      if (this.isOp("!")) {
        this.i++;
        a = this.node({ k: "fn", name: "fact", args: [a] });
      } else if (this.isOp("%")) {
        this.i++;
        a = this.node({ k: "pct", a });
      } else return a;
    }
  }

  private parsePostfix(): MathNode {
    return this.postfix(this.parsePostfixNoFact());
  }

  private parsePostfixNoFact(): MathNode {
    const p = this.parsePrimary();
    if (p.k === "sym" && this.isOp("_")) {
      this.i++;
      const sub = this.parseArg();
      const tag = sub.k === "num" && sub.v.d === 1n ? sub.v.n.toString() : sub.k === "sym" ? sub.name : null;
      if (tag === null) throw new MathParseFail("bad subscript");
      return this.node({ k: "sym", name: `${p.name}_${tag}` });
    }
    return p;
  }

  private startsPrimary(t: Tok | undefined): boolean {
    if (!t) return false;
    if (t.t === "num" || t.t === "id" || t.t === "fn" || t.t === "cmd") return true;
    return t.t === "open" && t.v !== "[";
  }

  private parseItems(closers: string[]): { items: MathNode[]; close: string } {
    const items: MathNode[] = [];
    const t = this.peek();
    if (t?.t === "close" && closers.includes(t.v)) {
      this.i++;
      return { items, close: t.v };
    }
    items.push(this.parseOver());
    while (this.isOp(",") || this.isOp(";")) {
      this.i++;
      items.push(this.parseOver());
    }
    return { items, close: this.expectClose(...closers) };
  }

  private parsePrimary(): MathNode {
    const t = this.peek();
    if (!t) throw new MathParseFail("unexpected end");
    this.i++;
    switch (t.t) {
      case "num": {
        const num = this.node({ k: "num" as const, v: t.v, dec: t.dec });
        const nx = this.peek();
        if (!t.dec && nx?.t === "cmd" && nx.v === "frac") {
          // Mixed number: 2\frac{1}{2} = 5/2 when both parts are integer literals.
          this.i++;
          const a = this.parseArg();
          const b = this.parseArg();
          const frac = this.node({ k: "div" as const, a, b });
          if (a.k === "num" && b.k === "num" && !a.dec && !b.dec) return this.node({ k: "add", args: [num, frac] });
          return this.mul(num, frac);
        }
        return num;
      }
      case "id":
        return this.node({ k: "sym", name: t.v });
      case "fn":
        return this.parseFunction(t.v);
      case "cmd":
        if (t.v === "frac") return this.node({ k: "div", a: this.parseArg(), b: this.parseArg() });
        if (t.v === "binom") return this.node({ k: "fn", name: "binom", args: [this.parseArg(), this.parseArg()] });
        if (t.v === "emptyset") return this.node({ k: "set", items: [] });
        if (t.v === "int") return this.parseIntegral();
        if (t.v === "lim") return this.parseLimit();
        if (t.v === "sqrt") {
          const o = this.peek();
          if (o?.t === "open" && o.v === "[") {
            this.i++;
            const n = this.parseRel();
            this.expectClose("]");
            return this.node({ k: "fn", name: "root", args: [this.parseArg(), n] });
          }
          return this.node({ k: "fn", name: "sqrt", args: [this.parseArg()] });
        }
        throw new MathParseFail(`unexpected ${t.v}`);
      case "open":
        return this.parseOpen(t.v);
      case "op":
        if (t.v === "|") {
          const a = this.parseAdd();
          if (!this.isOp("|")) throw new MathParseFail("unclosed |");
          this.i++;
          return this.node({ k: "fn", name: a.k === "matrix" ? "det" : "abs", args: [a] });
        }
        throw new MathParseFail(`unexpected ${t.v}`);
      case "close":
        throw new MathParseFail(`unexpected ${t.v}`);
    }
  }

  private parseOpen(v: string): MathNode {
    this.enter();
    try {
      if (v === "floor" || v === "ceil") {
        const a = this.parseAdd();
        this.expectClose(v);
        return this.node({ k: "fn", name: v, args: [a] });
      }
      if (v === "mat") {
        const rows: MathNode[][] = [[]];
        for (;;) {
          const t = this.peek();
          if (t?.t === "close" && t.v === "mat") {
            this.i++;
            break;
          }
          rows[rows.length - 1]!.push(this.parseRel());
          if (this.isOp("&")) this.i++;
          else if (this.isOp("row")) {
            this.i++;
            const nt = this.peek();
            if (!(nt?.t === "close" && nt.v === "mat")) rows.push([]);
          } else if (!(this.peek()?.t === "close")) throw new MathParseFail("bad matrix");
        }
        if (rows.some((r) => r.length !== rows[0]!.length) || rows[0]!.length === 0)
          throw new MathParseFail("ragged matrix");
        return this.node({ k: "matrix", rows });
      }
      if (v === "\\{") return this.node({ k: "set", items: this.parseItems(["\\{"]).items });
      if (v === "{") {
        const { items } = this.parseItems(["}"]);
        return items.length === 1 ? items[0]! : this.node({ k: "set", items });
      }
      const { items, close } = this.parseItems([")", "]"]);
      if (items.length === 0) throw new MathParseFail("empty brackets");
      if (items.length === 1 && (close === ")") === (v === "(")) return items[0]!;
      if (items.length === 1) throw new MathParseFail("mismatched brackets");
      return this.node({ k: "tuple", open: v, close, items });
    } finally {
      this.depth--;
    }
  }

  private parseFunction(name: string): MathNode {
    let base: MathNode | null = null;
    if (name === "log" && this.isOp("_")) {
      this.i++;
      base = this.parseArg();
    }
    let power: MathNode | null = null;
    if (this.isOp("^")) {
      this.i++;
      power = this.parsePowerArg();
    }
    if (name === "sqrt") return this.node({ k: "fn", name: "sqrt", args: [this.parseArg()] });
    let arg: MathNode;
    const t = this.peek();
    if (t?.t === "open" && t.v === "(") arg = this.parsePower();
    else {
      arg = this.parsePower();
      const atDx = (): boolean => this.inIntegrand > 0 && differentialAt(this.toks, this.i) > 0;
      const more = (): boolean => (this.peek()?.t === "num" || this.peek()?.t === "id") && !atDx();
      while (more()) arg = this.mul(arg, this.parsePower());
    }
    // \sin^{-1} x is arcsin x; \sin^2 x is (sin x)^2.
    if (
      power &&
      power.k === "neg" &&
      power.a.k === "num" &&
      power.a.v.n === 1n &&
      power.a.v.d === 1n &&
      ["sin", "cos", "tan"].includes(name)
    ) {
      return this.node({ k: "fn", name: `arc${name}`, args: [arg] });
    }
    const f = this.node({ k: "fn" as const, name, args: base ? [arg, base] : [arg] });
    return power ? this.node({ k: "pow", a: f, b: power }) : f;
  }
}

/** Parses a normalised answer string into a node; throws MathParseFail when it is outside the grammar. */
export function parseMath(s: string, decimalComma = false): MathNode {
  return new Parser(tokenize(s, decimalComma)).parseTop();
}
