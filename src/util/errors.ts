/**
 * Error types shared across rlvr. Each names what went wrong and where, so a user can act on the message
 * without reading our code: the op and shapes for tensor errors, the field for config errors, the file for I/O.
 */

/** Base class for every error rlvr throws on purpose. */
export class RlvrError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Shapes that an op cannot combine, e.g. `matmul: (2,3) @ (4,5): inner dims 3 != 4`. */
export class ShapeError extends RlvrError {}

/** A NaN or Inf where a finite number is required (a loss, a gradient norm). */
export class NonFiniteError extends RlvrError {}

/** A config or recipe that fails validation; the message names the field and the allowed values. */
export class ConfigError extends RlvrError {}

/** A checkpoint that is missing a tensor, has one of the wrong shape, or is otherwise unreadable. */
export class CheckpointError extends RlvrError {}

/** Formats a shape for messages: `(2, 3, 4)`. */
export function fmtShape(shape: readonly number[]): string {
  return `(${shape.join(", ")})`;
}
