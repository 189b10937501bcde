/**
 * The HTTP side of the remote sampler: JSON POSTs and GETs to an OpenAI-compatible server with fetch (Node 20's), a
 * time limit per request, and errors that say which URL failed and what the server answered (OpenAI error objects
 * are unwrapped to their message). Responses are validated with zod, loosely: servers add fields of their own.
 */
import { z } from "zod";
import { RlvrError } from "../../util/index.js";

/** A request to the remote sampler's server failed (unreachable, timed out, an error status, a malformed answer). */
export class RemoteSamplerError extends RlvrError {}

/** One completions choice, as OpenAI and vLLM write it (only the fields rlvr reads). */
export const CompletionChoiceSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  text: z.string(),
  finish_reason: z.string().nullable().optional(),
  logprobs: z
    .looseObject({
      tokens: z.array(z.string()).optional(),
      token_logprobs: z.array(z.number().nullable()),
    })
    .nullable()
    .optional(),
  /** vLLM's return_token_ids (PR #22587), rlvr serve's too: the sampled ids. */
  token_ids: z.array(z.number().int()).nullable().optional(),
});

/** A completions response. */
export const CompletionResponseSchema = z.looseObject({ choices: z.array(CompletionChoiceSchema) });

/** A parsed completions choice. */
export type CompletionChoice = z.infer<typeof CompletionChoiceSchema>;

/** Talks JSON to one server. */
export class JsonClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly timeoutMs: number,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  /** POST `{baseUrl}{route}` with a JSON body; the parsed answer, checked against `schema`. */
  post<T extends z.ZodType>(route: string, body: unknown, schema: T): Promise<z.output<T>> {
    return this.request("POST", route, schema, JSON.stringify(body));
  }

  /** GET `{baseUrl}{route}`; the parsed answer, checked against `schema`. */
  get<T extends z.ZodType>(route: string, schema: T): Promise<z.output<T>> {
    return this.request("GET", route, schema);
  }

  private async request<T extends z.ZodType>(
    method: string,
    route: string,
    schema: T,
    body?: string,
  ): Promise<z.output<T>> {
    const url = `${this.baseUrl}${route}`;
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new RemoteSamplerError(`remote sampler: ${method} ${url} failed: ${why}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new RemoteSamplerError(
        `remote sampler: ${method} ${url} answered ${res.status} with non-JSON: ${text.slice(0, 200)}`,
      );
    }
    if (!res.ok) {
      const e = (json as { error?: { message?: unknown } } | null)?.error;
      const msg = typeof e?.message === "string" ? e.message : text.slice(0, 200);
      throw new RemoteSamplerError(`remote sampler: ${method} ${url} answered ${res.status}: ${msg}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new RemoteSamplerError(
        `remote sampler: ${method} ${url}: unexpected answer at ${issue.path.join(".") || "(root)"}: ${issue.message}`,
      );
    }
    return parsed.data;
  }
}
