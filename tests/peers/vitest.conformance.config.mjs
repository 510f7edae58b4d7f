// The official Durable Streams conformance suite, run with `vitest run --config` this file.
// Works around upstream issue #284: vitest's default include never matches node_modules.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["node_modules/@durable-streams/server-conformance-tests/dist/test-runner.js"],
    exclude: [],
  },
})
