/**
 * Reward checker throughput: checks per second per family on 10,000 seeded, realistic completions (reasoning text,
 * then a correct, wrong, hedged or truncated final answer), on one core. Prints one JSON line per family
 * ({"bench","metric","value","unit"}) and a readable line. Target: maths >= 5,000 checks/s.
 * Run: npm run bench:rewards [-- --n 10000]
 */
import { Rng } from "../src/util/index.js";
import { textRewards, type RewardInput, type RewardSpec } from "../src/rewards/text-rewards.js";

const N = Number(process.argv[process.argv.indexOf("--n") + 1] ?? 0) || 10_000;
const rng = new Rng(2026);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.random() * xs.length)]!;
const int = (lo: number, hi: number): number => lo + Math.floor(rng.random() * (hi - lo + 1));

const SENTENCES = [
  "Let me set up the equation carefully.",
  "We know that $x + 3 = 7$, so $x = 4$.",
  "Substituting back gives $2x^2 - 3x + 1$.",
  "The area of the triangle is $\\frac{1}{2} b h$.",
  "Wait, let me double-check the arithmetic.",
  "Using the quadratic formula, $x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}$.",
  "So the sum telescopes to $1 - \\frac{1}{n+1}$.",
  "Hmm, that does not look right; recompute $7 \\times 8 = 56$.",
  "Therefore the probability is the ratio of favourable outcomes.",
  "Note that $\\sin^2 x + \\cos^2 x = 1$ for every $x$.",
  "Counting the cases: 12 + 15 + 9 = 36.",
  "The interval where $f'(x) > 0$ is what we need.",
];
const reasoning = (): string => Array.from({ length: int(6, 24) }, () => pick(SENTENCES)).join(" ");
const think = (body: string): string => `<think>\n${reasoning()}\n</think>\n${body}`;
// Token ids only matter by count; a small pool keeps the bench's own garbage out of the measurement.
const TOKEN_POOL = Array.from({ length: 32 }, (_, i) => new Array<number>(200 + i * 150).fill(1));

/** Maths golds and a plausible wrong answer for each. */
function mathCase(): [string, string, string] {
  const k = int(0, 7);
  const a = int(1, 999);
  const b = int(2, 99);
  switch (k) {
    case 0:
      return [String(a), String(a), String(a + 1)];
    case 1:
      return [
        `\\frac{${a}}{${b}}`,
        pick([`\\frac{${a}}{${b}}`, `${a}/${b}`, (a / b).toFixed(6)]),
        `\\frac{${a + 1}}{${b}}`,
      ];
    case 2:
      return [`${a}.5`, pick([`${a}.5`, `${a}.50`, `\\frac{${2 * a + 1}}{2}`]), `${a}.4`];
    case 3:
      return [`${a}\\sqrt{2}`, pick([`${a}\\sqrt{2}`, `\\sqrt{${2 * a * a}}`]), `${a}\\sqrt{3}`];
    case 4:
      return [`x^2+${2 * a}x+${a * a}`, `(x+${a})^2`, `(x+${a + 1})^2`];
    case 5:
      return [`[${a}, ${a + b})`, `[${a}, ${a + b})`, `(${a}, ${a + b})`];
    case 6:
      return [`\\{${a}, ${b}\\}`, pick([`\\{${b}, ${a}\\}`, `${a}, ${b}`]), `\\{${a}, ${b + 1}\\}`];
    default:
      return [`${a}\\%`, pick([`${a}\\%`, String(a), (a / 100).toString()]), `${a + 1}\\%`];
  }
}

function mathInput(): RewardInput {
  const [gold, right, wrong] = mathCase();
  const r = rng.random();
  const body =
    r < 0.5
      ? `The final answer is $\\boxed{${right}}$.`
      : r < 0.8
        ? `So the answer is $\\boxed{${wrong}}$.`
        : r < 0.9
          ? `The answer is ${right}.`
          : `\\boxed{${right}`;
  return { completion: think(body), gold, tokens: pick(TOKEN_POOL) };
}

const box = (): number[] => {
  const x = int(0, 500);
  const y = int(0, 400);
  return [x, y, x + int(10, 200), y + int(10, 200)];
};
const jitter = (b: number[]): number[] => b.map((v) => v + int(-8, 8));

const GENERATORS: Record<string, () => RewardInput> = {
  "math-answer": mathInput,
  "cosine-length": mathInput,
  "format-tags": () => ({
    completion: rng.random() < 0.7 ? think(`<answer>${int(0, 99)}</answer>`) : `${reasoning()} <answer>1</answer>`,
    gold: null,
  }),
  overlong: () => ({ completion: "", gold: null, tokens: pick(TOKEN_POOL) }),
  "box-detection": () => {
    const gold = Array.from({ length: int(1, 4) }, box);
    const preds = gold.map((g) => ({ Position: jitter(g), Confidence: Number(rng.random().toFixed(2)) }));
    if (rng.random() < 0.3) preds.push({ Position: box(), Confidence: 0.2 });
    return { completion: think(`<answer>${JSON.stringify(preds)}</answer>`), gold: { boxes: gold } };
  },
  "box-grounding": () => {
    const b = box();
    const p = jitter(b);
    return { completion: think(`<answer>(${p[0]},${p[1]}),(${p[2]},${p[3]})</answer>`), gold: { box: b } };
  },
  "class-match": () => ({
    completion: think(`<answer>${pick(["golden retriever", "Labrador", "cat", "Golden_Retriever"])}</answer>`),
    gold: { label: "Golden Retriever" },
  }),
  "temporal-iou": () => {
    const s = int(0, 50);
    return {
      completion: think(`<answer>The event happens from ${s + int(-3, 3)} to ${s + int(5, 20)} seconds.</answer>`),
      gold: { segment: [s, s + 10], duration: 80 },
    };
  },
  "tracking-iou": () => {
    const boxes = Array.from({ length: 8 }, box);
    return { completion: think(`<answer>${JSON.stringify(boxes.map(jitter))}</answer>`), gold: { boxes } };
  },
  "video-mcq": () => ({
    completion: think(`<answer>${pick(["A", "(B)", "C. a bird", "a dog", "A or B"])}</answer>`),
    gold: { answer: "B", options: ["a cat", "a dog", "a bird", "a fish"] },
  }),
  "grounded-qa": () => ({
    completion: think(
      `<answer>${pick(["A", "B"])}</answer>\n<glue>[(${int(0, 5)}, ${int(6, 10)}), (${int(18, 21)}, ${int(22, 26)})]</glue>`,
    ),
    gold: {
      answer: "A",
      options: ["he opens the door", "he sits down"],
      glue: [
        [3, 8],
        [20, 24],
      ],
    },
  }),
  "sudoku-cells": () => {
    const sol = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
    const puzzle = [...sol].map((c) => (rng.random() < 0.5 ? "0" : c)).join("");
    const answer = [...sol].map((c) => (rng.random() < 0.1 ? String(int(1, 9)) : c)).join("");
    return {
      completion: think(`<answer>\n${answer.match(/.{9}/g)!.join("\n")}\n</answer>`),
      gold: { puzzle, solution: sol },
    };
  },
  "kg-answer": () => {
    const turns = [
      "<entities>\naspirin\n</entities>",
      "<groups>\nNSAIDs; analgesics\n</groups>",
      think(`<answer>${pick(["Aspirin", "ibuprofen", "the aspirin", "aspirin, ibuprofen"])}</answer>`),
    ];
    return { completion: turns[2]!, turns, gold: { answers: ["aspirin", "acetylsalicylic acid"] } };
  },
  "conductor-plan": () => {
    const L = int(1, 5);
    const plan = `model_id = [${Array.from({ length: L }, () => int(0, 2)).join(", ")}]\nsubtasks = [${Array.from({ length: L }, () => `"${pick(SENTENCES).replace(/["\\$]/g, "")}"`).join(", ")}]\naccess_list = [${Array.from({ length: L }, (_, i) => `[${Array.from({ length: i }, (_, j) => j).join(", ")}]`).join(", ")}]`;
    return { completion: think(plan), gold: { pool: 3, chain: { correct: rng.random() < 0.5 } } };
  },
};

/** Wall-clock and CPU-time rates; on a shared machine the CPU-time rate is the one-core figure. */
async function measure(spec: RewardSpec<any, any>, inputs: RewardInput[]): Promise<{ wall: number; cpu: number }> {
  const options = spec.options.parse({});
  for (const input of inputs.slice(0, 2_000)) await spec.score(input, options); // warm-up (JIT)
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const input of inputs) await spec.score(input, options);
  const c = process.cpuUsage(c0);
  return { wall: inputs.length / ((performance.now() - t0) / 1000), cpu: inputs.length / ((c.user + c.system) / 1e6) };
}

for (const spec of textRewards) {
  const gen = GENERATORS[spec.name];
  if (!gen) continue;
  const inputs = Array.from({ length: N }, gen);
  const rate = await measure(spec, inputs);
  const value = Math.round(rate.cpu);
  console.log(
    JSON.stringify({
      bench: "rewards",
      metric: `${spec.name}.checks_per_cpu_s`,
      value,
      unit: "checks/s (one core, CPU time)",
    }),
  );
  console.log(
    JSON.stringify({
      bench: "rewards",
      metric: `${spec.name}.checks_per_wall_s`,
      value: Math.round(rate.wall),
      unit: "checks/s (wall clock)",
    }),
  );
  const target =
    spec.name === "math-answer" ? (value >= 5000 ? "  (target >= 5,000: met)" : "  (target >= 5,000: MISSED)") : "";
  console.log(
    `  ${spec.name.padEnd(16)} ${value.toLocaleString("en-US").padStart(10)} checks/s per CPU-second (${Math.round(rate.wall).toLocaleString("en-US")} wall) on ${N.toLocaleString("en-US")} completions${target}`,
  );
}
