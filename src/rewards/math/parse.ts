/**
 * Tokenizer and recursive-descent parser for maths answers written in LaTeX or plain text (one grammar for both).
 * It reads a literal grammar only (G4): numbers, symbols, + - * / ^, implicit products, \frac, \sqrt, \binom,
 * functions, |x|, floor/ceil, factorial, percent, ± , sets, tuples and intervals, unions, relation chains and
 * matrices. Work is bounded: at most MAX_TOKENS tokens, MAX_NODES nodes and MAX_DEPTH nesting; anything over is
 * "unparseable". Exponent literals are bounded to |e| <= 400. Text/choice detection happens before (normalize.ts).
 */
import { MathParseFail, type MathNode, type Rational, rat } from "./ast.js";

type Tok =
  | { t: "num"; raw: string; v: Rational; dec: boolean }
  | { t: "id"; v: string }
  | { t: "fn"; v: string } // sin, ln, log, ...
  | { t: "op"; v: string } // + - * / ^ _ ! % , ; = < > <= >= != in pm mp cup & row |
  | { t: "open"; v: string } // ( [ { \{ floor ceil mat
  | { t: "close"; v: string }
  | { t: "cmd"; v: string }; // frac sqrt binom emptyset

const MAX_TOKENS = 2_000;
const MAX_NODES = 5_000;
const MAX_DEPTH = 120;

const FUNCS = new Set([
  "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
  "ln", "log", "exp", "sqrt",
]);
const WORD_IDS: Record<string, string> = { pi: "pi", inf: "inf", infty: "inf", infinity: "inf" };
const GREEK = new Set([
  "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota", "kappa",
  "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega",
  "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega",
]);
const CMD_OPS: Record<string, Tok> = {
  le: { t: "op", v: "<=" }, leq: { t: "op", v: "<=" }, leqslant: { t: "op", v: "<=" },
  ge: { t: "op", v: ">=" }, geq: { t: "op", v: ">=" }, geqslant: { t: "op", v: ">=" },
  lt: { t: "op", v: "<" }, gt: { t: "op", v: ">" }, ne: { t: "op", v: "!=" }, neq: { t: "op", v: "!=" },
  cdot: { t: "op", v: "*" }, times: { t: "op", v: "*" }, ast: { t: "op", v: "*" }, div: { t: "op", v: "/" },
  pm: { t: "op", v: "pm" }, mp: { t: "op", v: "mp" }, cup: { t: "op", v: "cup" }, in: { t: "op", v: "in" },
  infty: { t: "id", v: "inf" }, pi: { t: "id", v: "pi" }, emptyset: { t: "cmd", v: "emptyset" },
  varnothing: { t: "cmd", v: "emptyset" }, lvert: { t: "op", v: "|" }, rvert: { t: "op", v: "|" },
  vert: { t: "op", v: "|" }, mid: { t: "op", v: "|" }, lfloor: { t: "open", v: "floor" },
  rfloor: { t: "close", v: "floor" }, lceil: { t: "open", v: "ceil" }, rceil: { t: "close", v: "ceil" },
  langle: { t: "open", v: "(" }, rangle: { t: "close", v: ")" }, lbrace: { t: "open", v: "\\{" },
  rbrace: { t: "close", v: "\\{" }, frac: { t: "cmd", v: "frac" }, dfrac: { t: "cmd", v: "frac" },
  tfrac: { t: "cmd", v: "frac" }, cfrac: { t: "cmd", v: "frac" }, sqrt: { t: "cmd", v: "sqrt" },
  binom: { t: "cmd", v: "binom" }, dbinom: { t: "cmd", v: "binom" }, tbinom: { t: "cmd", v: "binom" },
  choose: { t: "op", v: "choose" }, to: { t: "op", v: "," },
};
const SKIP_CMDS = new Set([
  "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "displaystyle",
  "textstyle", "limits", "quad", "qquad", "cdots", "ldots", "dots", "hline", "mathrm", "mathbf", "mathit", "boldsymbol",
  "mathsf", "rm", "bf",
]);
const MATRIX_ENVS = new Set(["pmatrix", "bmatrix", "Bmatrix", "matrix", "smallmatrix", "array"]);

function numberToken(intDigits: string, frac: string, exp: number): Tok {
  if (Math.abs(exp) > 400 || intDigits.length + frac.length > 1_000) throw new MathParseFail("number too large");
  let n = BigInt((intDigits || "0") + frac);
  let d = 10n ** BigInt(frac.length);
  if (exp > 0) n *= 10n ** BigInt(exp);
  if (exp < 0) d *= 10n ** BigInt(-exp);
  return { t: "num", raw: intDigits + (frac ? "." + frac : ""), v: rat(n, d), dec: frac.length > 0 || exp !== 0 };
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isLetter = (c: string | undefined): boolean => c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));

function readDigits(s: string, i: number): number {
  while (isDigit(s[i])) i++;
  return i;
}

/** Splits a normalised answer into tokens; throws MathParseFail on characters outside the grammar. */
export function tokenize(s: string, decimalComma = false): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const push = (t: Tok): void => {
    if (out.length >= MAX_TOKENS) throw new MathParseFail("too many tokens");
    out.push(t);
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (isDigit(c) || (c === "." && isDigit(s[i + 1]))) {
      let j = readDigits(s, i);
      let intDigits = s.slice(i, j);
      if (!decimalComma && intDigits.length > 0 && intDigits.length <= 3) {
        // Thousands separators: a comma or a single space between groups of exactly three digits.
        while ((s[j] === "," || s[j] === " ") && isDigit(s[j + 1]) && isDigit(s[j + 2]) && isDigit(s[j + 3]) && !isDigit(s[j + 4])) {
          intDigits += s.slice(j + 1, j + 4);
          j += 4;
        }
      }
      let frac = "";
      if ((s[j] === "." || (decimalComma && s[j] === ",")) && isDigit(s[j + 1])) {
        const k = readDigits(s, j + 1);
        frac = s.slice(j + 1, k);
        j = k;
      } else if (s[j] === "." && intDigits && !isLetter(s[j + 1])) j++; // "5." is 5
      let exp = 0;
      if ((s[j] === "e" || s[j] === "E") && (isDigit(s[j + 1]) || ((s[j + 1] === "+" || s[j + 1] === "-") && isDigit(s[j + 2])))) {
        const start = s[j + 1] === "+" || s[j + 1] === "-" ? j + 2 : j + 1;
        const k = readDigits(s, start);
        if (k - start > 6) throw new MathParseFail("exponent too large");
        exp = Number(s.slice(start, k)) * (s[j + 1] === "-" ? -1 : 1);
        j = k;
      }
      push(numberToken(intDigits, frac, exp));
      i = j;
    } else if (isLetter(c)) {
      let j = i;
      while (isLetter(s[j])) j++;
      const word = s.slice(i, j);
      if (FUNCS.has(word)) push({ t: "fn", v: word });
      else if (WORD_IDS[word]) push({ t: "id", v: WORD_IDS[word]! });
      else for (const ch of word) push({ t: "id", v: ch }); // implicit product of single-letter symbols
      i = j;
    } else if (c === "\\") {
      const n = s[i + 1];
      if (n === undefined) throw new MathParseFail("dangling backslash");
      if (!isLetter(n)) {
        i += 2;
        if (n === "{") push({ t: "open", v: "\\{" });
        else if (n === "}") push({ t: "close", v: "\\{" });
        else if (n === "%") push({ t: "op", v: "%" });
        else if (n === "\\") push({ t: "op", v: "row" });
        else if (n === "|") push({ t: "op", v: "|" });
        else if (n === "$") continue;
        else if (",;:! ".includes(n)) continue;
        else throw new MathParseFail(`unknown escape \\${n}`);
        continue;
      }
      let j = i + 1;
      while (isLetter(s[j])) j++;
      const name = s.slice(i + 1, j);
      i = j;
      if (name === "begin" || name === "end") {
        const m = /^\{([a-zA-Z*]+)\}/.exec(s.slice(i, i + 40));
        if (!m || !MATRIX_ENVS.has(m[1]!)) throw new MathParseFail(`environment not supported`);
        i += m[0].length;
        if (name === "begin" && m[1] === "array") {
          const spec = /^\{[^{}]*\}/.exec(s.slice(i, i + 60));
          if (spec) i += spec[0].length;
        }
        push(name === "begin" ? { t: "open", v: "mat" } : { t: "close", v: "mat" });
      } else if (name === "left" || name === "right") {
        if (s[i] === ".") i++;
      } else if (SKIP_CMDS.has(name)) {
        continue;
      } else if (name === "operatorname") {
        const m = /^\{([a-zA-Z]+)\}/.exec(s.slice(i, i + 30));
        if (!m) throw new MathParseFail("bad operatorname");
        i += m[0].length;
        if (FUNCS.has(m[1]!)) push({ t: "fn", v: m[1]! });
        else throw new MathParseFail(`unknown operator ${m[1]}`);
      } else if (CMD_OPS[name]) push(CMD_OPS[name]!);
      else if (FUNCS.has(name)) push({ t: "fn", v: name });
      else if (GREEK.has(name)) push({ t: "id", v: name });
      else throw new MathParseFail(`unknown command \\${name}`);
    } else {
      i++;
      const two = c + (s[i] ?? "");
      if (two === "<=" || two === ">=" || two === "!=" || two === "=<" || two === "=>") {
        push({ t: "op", v: two === "=<" ? "<=" : two === "=>" ? ">=" : two });
        i++;
      } else if (two === "**") {
        push({ t: "op", v: "^" });
        i++;
      } else if ("+-*/^_!%,;=<>|&".includes(c)) push({ t: "op", v: c });
      else if (c === "(" || c === "[" || c === "{") push({ t: "open", v: c });
      else if (c === ")" || c === "]" || c === "}") push({ t: "close", v: c });
      else if (c === "'") throw new MathParseFail("primes are not supported");
      else throw new MathParseFail(`unexpected character ${JSON.stringify(c)}`);
    }
  }
  return out;
}

const REL_OPS = new Set(["=", "<", ">", "<=", ">=", "!=", "in"]);

/** Recursive-descent parser over the token list. */
class Parser {
  private i = 0;
  private nodes = 0;
  private depth = 0;
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
    const items = [this.parseRel()];
    while (this.isOp(",") || this.isOp(";")) {
      this.i++;
      items.push(this.parseRel());
    }
    if (this.i < this.toks.length) throw new MathParseFail("trailing tokens");
    return items.length > 1 ? this.node({ k: "list", items }) : items[0]!;
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
      } else if (this.startsPrimary(this.peek())) {
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
    const inner = this.parseRel();
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
    items.push(this.parseRel());
    while (this.isOp(",") || this.isOp(";")) {
      this.i++;
      items.push(this.parseRel());
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
          return this.node({ k: "fn", name: "abs", args: [a] });
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
        if (rows.some((r) => r.length !== rows[0]!.length) || rows[0]!.length === 0) throw new MathParseFail("ragged matrix");
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
      while (this.peek()?.t === "num" || this.peek()?.t === "id") arg = this.mul(arg, this.parsePower());
    }
    // \sin^{-1} x is arcsin x; \sin^2 x is (sin x)^2.
    if (power && power.k === "neg" && power.a.k === "num" && power.a.v.n === 1n && power.a.v.d === 1n && ["sin", "cos", "tan"].includes(name)) {
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
