/**
 * OpenAI-style error objects for the model server: every failed request is answered with
 * `{ error: { message, type, param, code } }` and an HTTP status, the shape the official clients parse into
 * `APIError` subclasses (BadRequestError for 400, NotFoundError for 404, ...). vLLM answers the same shape.
 */

/** A request error with its OpenAI fields. */
export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  /** The response body. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400 invalid_request_error naming the field. */
export function badRequest(message: string, param: string | null = null, code: string | null = null): OpenAIError {
  return new OpenAIError(400, "invalid_request_error", message, param, code);
}

/** 404 for a model name this server does not serve (OpenAI's `model_not_found`). */
export function unknownModel(name: string, served: string): OpenAIError {
  return new OpenAIError(
    404,
    "invalid_request_error",
    `The model \`${name}\` does not exist; this server serves \`${served}\` (GET /v1/models)`,
    "model",
    "model_not_found",
  );
}
