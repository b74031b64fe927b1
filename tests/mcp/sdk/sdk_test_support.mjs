// What the MCP SDK end-to-end tests share: the server binary argument and
// numbered checks, printed "ok N - name" as they pass.
import { resolve } from "node:path";

/// The absolute path of the binary given as the first argument (the server
/// runs in another directory); prints `usage` and exits 2 when it is missing.
export function binaryArgument(usage) {
  if (!process.argv[2]) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return resolve(process.argv[2]);
}

let passed = 0;

/// Runs one named check; a failure throws and ends the test.
export async function check(name, body) {
  await body();
  passed += 1;
  console.log(`ok ${passed} - ${name}`);
}

/// How many checks have passed.
export const checksPassed = () => passed;
