// The reference Durable Streams server (@durable-streams/server) for tests and benchmarks.
// Usage: LONG_POLL_MS=500 node tests/peers/reference_server.mjs <port> [dataDir]
// File-backed (segment files + LMDB) when dataDir is given, memory otherwise. Loopback only.
// Prints "listening <url>" once it accepts connections; stops on SIGTERM or SIGINT.
import { DurableStreamTestServer } from "@durable-streams/server"

const port = Number(process.argv[2] ?? 4437)
const dataDir = process.argv[3]
const longPollTimeout = process.env.LONG_POLL_MS ? Number(process.env.LONG_POLL_MS) : undefined

const server = new DurableStreamTestServer({
  port,
  host: "127.0.0.1",
  ...(dataDir ? { dataDir } : {}),
  ...(longPollTimeout ? { longPollTimeout } : {}),
})
await server.start()
console.log(`listening ${server.url}`)

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  // Open long-polls would hold server.stop() until they time out: don't wait for them.
  setTimeout(() => process.exit(0), 2000).unref()
  await server.stop()
  process.exit(0)
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
