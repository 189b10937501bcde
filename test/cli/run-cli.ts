/** Runs the rlvr CLI from source (tests spawn it with tsx; `bin/rlvr.js` runs the same program from dist/). */
import { main } from "../../src/cli/index.js";

await main(process.argv);
