/**
 * Tokenizer for maths answers (LaTeX and plain text share it): numbers with thousands separators, decimals and
 * e-exponents, letters (known function words, otherwise single-letter symbols), LaTeX commands mapped to operators,
 * functions and brackets, and matrix environments. At most MAX_TOKENS tokens; unknown characters or commands throw
 * MathParseFail (the answer is unparseable). `\mathbb{R}` (and `\R`) become the tokens of `(-\infty,\infty)`;
 * `vmatrix` is a determinant; `\int`, `\lim` and `\over` are passed to the parser.
 */
import { MathParseFail, type Rational, rat } from "./ast.js";

/** One token of a maths answer. */
export type Tok =
  | { t: "num"; raw: string; v: Rational; dec: boolean }
  | { t: "id"; v: string }
  | { t: "fn"; v: string } // sin, ln, log, ...
  | { t: "op"; v: string } // + - * / ^ _ ! % , ; = < > <= >= != in pm mp cup & row |
  | { t: "open"; v: string } // ( [ { \{ floor ceil mat
  | { t: "close"; v: string }
  | { t: "cmd"; v: string }; // frac sqrt binom emptyset

const MAX_TOKENS = 2_000;

const FUNCS = new Set([
  "sin",
  "cos",
  "tan",
  "sec",
  "csc",
  "cot",
  "arcsin",
  "arccos",
  "arctan",
  "sinh",
  "cosh",
  "tanh",
  "ln",
  "log",
  "exp",
  "sqrt",
  "det",
]);
const WORD_IDS: Record<string, string> = { pi: "pi", inf: "inf", infty: "inf", infinity: "inf" };
const GREEK = new Set([
  "alpha",
  "beta",
  "gamma",
  "delta",
  "epsilon",
  "varepsilon",
  "zeta",
  "eta",
  "theta",
  "vartheta",
  "iota",
  "kappa",
  "lambda",
  "mu",
  "nu",
  "xi",
  "rho",
  "sigma",
  "tau",
  "upsilon",
  "phi",
  "varphi",
  "chi",
  "psi",
  "omega",
  "Gamma",
  "Delta",
  "Theta",
  "Lambda",
  "Xi",
  "Sigma",
  "Phi",
  "Psi",
  "Omega",
]);
const CMD_OPS: Record<string, Tok> = {
  le: { t: "op", v: "<=" },
  leq: { t: "op", v: "<=" },
  leqslant: { t: "op", v: "<=" },
  ge: { t: "op", v: ">=" },
  geq: { t: "op", v: ">=" },
  geqslant: { t: "op", v: ">=" },
  lt: { t: "op", v: "<" },
  gt: { t: "op", v: ">" },
  ne: { t: "op", v: "!=" },
  neq: { t: "op", v: "!=" },
  cdot: { t: "op", v: "*" },
  times: { t: "op", v: "*" },
  ast: { t: "op", v: "*" },
  div: { t: "op", v: "/" },
  pm: { t: "op", v: "pm" },
  mp: { t: "op", v: "mp" },
  cup: { t: "op", v: "cup" },
  in: { t: "op", v: "in" },
  infty: { t: "id", v: "inf" },
  pi: { t: "id", v: "pi" },
  emptyset: { t: "cmd", v: "emptyset" },
  varnothing: { t: "cmd", v: "emptyset" },
  lvert: { t: "op", v: "|" },
  rvert: { t: "op", v: "|" },
  vert: { t: "op", v: "|" },
  mid: { t: "op", v: "|" },
  lfloor: { t: "open", v: "floor" },
  rfloor: { t: "close", v: "floor" },
  lceil: { t: "open", v: "ceil" },
  rceil: { t: "close", v: "ceil" },
  langle: { t: "open", v: "(" },
  rangle: { t: "close", v: ")" },
  lbrace: { t: "open", v: "\\{" },
  rbrace: { t: "close", v: "\\{" },
  frac: { t: "cmd", v: "frac" },
  dfrac: { t: "cmd", v: "frac" },
  tfrac: { t: "cmd", v: "frac" },
  cfrac: { t: "cmd", v: "frac" },
  sqrt: { t: "cmd", v: "sqrt" },
  binom: { t: "cmd", v: "binom" },
  dbinom: { t: "cmd", v: "binom" },
  tbinom: { t: "cmd", v: "binom" },
  choose: { t: "op", v: "choose" },
  to: { t: "op", v: "," },
  rightarrow: { t: "op", v: "," },
  longrightarrow: { t: "op", v: "," },
  over: { t: "op", v: "over" },
  nicefrac: { t: "cmd", v: "frac" },
  sfrac: { t: "cmd", v: "frac" },
  int: { t: "cmd", v: "int" },
  lim: { t: "cmd", v: "lim" },
};
/** The real line, `(-\infty, \infty)`, as tokens. */
const REALS: Tok[] = [
  { t: "open", v: "(" },
  { t: "op", v: "-" },
  { t: "id", v: "inf" },
  { t: "op", v: "," },
  { t: "id", v: "inf" },
  { t: "close", v: ")" },
];
const SKIP_CMDS = new Set([
  "left",
  "right",
  "big",
  "Big",
  "bigg",
  "Bigg",
  "bigl",
  "bigr",
  "Bigl",
  "Bigr",
  "biggl",
  "biggr",
  "displaystyle",
  "textstyle",
  "limits",
  "quad",
  "qquad",
  "cdots",
  "ldots",
  "dots",
  "hline",
  "mathrm",
  "mathbf",
  "mathit",
  "boldsymbol",
  "mathsf",
  "rm",
  "bf",
]);
const MATRIX_ENVS = new Set(["pmatrix", "bmatrix", "Bmatrix", "matrix", "smallmatrix", "array", "vmatrix", "Vmatrix"]);

/** A number token from its digits, fraction digits and exponent (|e| <= 400, at most 1,000 digits). */
export function numberToken(intDigits: string, frac: string, exp: number): Tok {
  if (Math.abs(exp) > 400 || intDigits.length + frac.length > 1_000) throw new MathParseFail("number too large");
  let n = BigInt((intDigits || "0") + frac);
  let d = 10n ** BigInt(frac.length);
  if (exp > 0) n *= 10n ** BigInt(exp);
  if (exp < 0) d *= 10n ** BigInt(-exp);
  return { t: "num", raw: intDigits + (frac ? "." + frac : ""), v: rat(n, d), dec: frac.length > 0 || exp !== 0 };
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isLetter = (c: string | undefined): boolean =>
  c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));

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
        while (
          (s[j] === "," || s[j] === " ") &&
          isDigit(s[j + 1]) &&
          isDigit(s[j + 2]) &&
          isDigit(s[j + 3]) &&
          !isDigit(s[j + 4])
        ) {
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
      if (
        (s[j] === "e" || s[j] === "E") &&
        (isDigit(s[j + 1]) || ((s[j + 1] === "+" || s[j + 1] === "-") && isDigit(s[j + 2])))
      ) {
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
        const m = /^\s*\{\s*([a-zA-Z*]+)\s*\}/.exec(s.slice(i, i + 40));
        if (!m || !MATRIX_ENVS.has(m[1]!)) throw new MathParseFail(`environment not supported`);
        i += m[0].length;
        if (name === "begin" && m[1] === "array") {
          const spec = /^\s*\{[^{}]*\}/.exec(s.slice(i, i + 60));
          if (spec) i += spec[0].length;
        }
        if (name === "begin" && (m[1] === "vmatrix" || m[1] === "Vmatrix")) push({ t: "fn", v: "det" });
        push(name === "begin" ? { t: "open", v: "mat" } : { t: "close", v: "mat" });
      } else if (name === "mathbb" || name === "Bbb" || name === "R") {
        const m = name === "R" ? ["", "R"] : /^\s*(?:\{\s*([A-Z])\s*\}|([A-Z]))/.exec(s.slice(i, i + 12));
        const letter = m && (m[1] ?? m[2]);
        if (letter !== "R") throw new MathParseFail("only the real line \\mathbb{R} is supported");
        if (m && name !== "R") i += m[0]!.length;
        for (const t of REALS) push(t);
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

/** Token count of an integral's differential at index i: `d x` (2) or `{ d } x` (4); 0 when there is none. */
export function differentialAt(t: Tok[], i: number): number {
  const isD = (k: number): boolean => t[k]?.t === "id" && t[k]!.v === "d";
  if (isD(i) && t[i + 1]?.t === "id") return 2;
  if (t[i]?.t === "open" && isD(i + 1) && t[i + 2]?.t === "close" && t[i + 3]?.t === "id") return 4;
  return 0;
}

/**
 * Reads `_ { x \to` of a limit at index i and removes a one-sided mark (`^+`, `^-`, `^{+}`, `^{-}`) just before the
 * subscript's closing brace, so the parser reads the target as an ordinary expression. Returns the bound variable,
 * the side, and the index of the target's first token. Throws MathParseFail on any other shape.
 */
export function takeLimitSubscript(t: Tok[], i: number): { v: string; side: "" | "+" | "-"; next: number } {
  const v = t[i + 2];
  const isOp = (k: number, s: string): boolean => t[k]?.t === "op" && t[k]!.v === s;
  if (!isOp(i, "_") || !(t[i + 1]?.t === "open" && t[i + 1]!.v === "{") || v?.t !== "id" || !isOp(i + 3, ",")) {
    throw new MathParseFail("a limit needs _{x \\to a}");
  }
  let j = i + 4;
  for (let depth = 0; j < t.length; j++) {
    if (t[j]!.t === "open") depth++;
    else if (t[j]!.t === "close" && depth-- === 0) break;
  }
  if (j >= t.length) throw new MathParseFail("unclosed limit subscript");
  const sign = (k: number): "+" | "-" | null => (isOp(k, "+") ? "+" : isOp(k, "-") ? "-" : null);
  let side: "" | "+" | "-" = "";
  if (isOp(j - 2, "^") && sign(j - 1)) {
    side = sign(j - 1)!;
    t.splice(j - 2, 2);
  } else if (isOp(j - 4, "^") && t[j - 3]?.v === "{" && sign(j - 2) && t[j - 1]?.v === "}") {
    side = sign(j - 2)!;
    t.splice(j - 4, 4);
  }
  return { v: v.v, side, next: i + 4 };
}
