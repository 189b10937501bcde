/**
 * Loads the built-in rewards and tasks (each registers itself in its process-wide registry on import), so that a
 * recipe can name any of them. Imported for its side effect by the training loop and evaluation.
 */
import "../rewards/index.js";
import "../tasks/index.js";
import "../rollout/conductor/index.js"; // registers the "conductor" task (its chains call worker models)
