// A fake T3 Code server on the real Effect RPC server (effect 4.0.5), for the board tests.
//
//   node tests/peers/t3_server.mjs <port> <script.json>
//
// What it emulates (see ../shared/reference/t3code.md §3.3):
// - GET /.well-known/t3/environment; POST /api/auth/websocket-ticket (Bearer → one-time ticket)
// - GET /ws: 426 unless orchestrationProtocol=2 (checked first), then a one-time wsTicket or
//   Authorization: Bearer, else 401; then Effect RPC with JSON frames, so Ack back-pressure,
//   Interrupt, Ping/Pong, Exit and Defect frames are the real server's own.
// - orchestration.subscribeShell: the script's shell chunks (one wire Chunk each), a
//   `synchronized` marker after the first when asked for, then live pushes; or a failure.
// - orchestration.subscribeThread / getThreadProjection: scripted per thread; unknown threads
//   fail with OrchestrationV2GetThreadProjectionError.
// - orchestration.subscribeArchivedShell: the script's archivedShell chunks, then live
//   pushes (`"archived": true`); a script with `"noArchivedShell": true` has no such method
//   (an older T3), answered as a defect.
// - POST /_fake/push {"chunk": [...], "archived"?: true}: one more chunk to every live shell
//   subscription (or archived shell subscription).
//
// The script: {"token", "shell": [[item, …], …], "shellEnd": "live"|"done"|"fail",
//              "archivedShell": [[item, …], …],
//              "threads": {"<id>": {"projection": {…}, "stream": [[item, …], …]}}}
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import * as http from "node:http"

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Queue, Schema, Stream } from "effect"
import { HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Rpc, RpcGroup, RpcSerialization, RpcServer } from "effect/rpc"

const [port, scriptPath] = process.argv.slice(2)
const script = JSON.parse(readFileSync(scriptPath, "utf8"))
const tickets = new Map() // ticket -> expiry (ms)
const shells = new Set() // live shell subscriptions' queues
const archivedShells = new Set() // live archived shell subscriptions' queues

class ShellError extends Schema.TaggedError()("OrchestrationV2GetShellSnapshotError", {
  message: Schema.String,
}) {}
class ThreadError extends Schema.TaggedError()("OrchestrationV2GetThreadProjectionError", {
  threadId: Schema.String,
  message: Schema.String,
}) {}
class AuthorizationError extends Schema.TaggedError()("EnvironmentAuthorizationError", {
  message: Schema.String,
}) {}

const resume = {
  afterSequence: Schema.optionalKey(Schema.Number),
  requestCompletionMarker: Schema.optionalKey(Schema.Boolean),
}
const Group = RpcGroup.make(
  Rpc.make("orchestration.subscribeShell", {
    payload: resume,
    success: Schema.Unknown,
    error: Schema.Union([ShellError, AuthorizationError]),
    stream: true,
  }),
  Rpc.make("orchestration.subscribeArchivedShell", {
    payload: resume,
    success: Schema.Unknown,
    error: Schema.Union([ShellError, AuthorizationError]),
    stream: true,
  }),
  Rpc.make("orchestration.subscribeThread", {
    payload: { threadId: Schema.String, ...resume },
    success: Schema.Unknown,
    error: Schema.Union([ThreadError, AuthorizationError]),
    stream: true,
  }),
  Rpc.make("orchestration.getThreadProjection", {
    payload: { threadId: Schema.String },
    success: Schema.Unknown,
    error: Schema.Union([ThreadError, AuthorizationError]),
  }),
)

const scripted = (chunks, marker) => {
  const arrays = (chunks ?? []).map((chunk) => chunk.slice())
  if (marker) arrays.splice(Math.min(1, arrays.length), 0, [{ kind: "synchronized" }])
  return arrays.length ? Stream.fromArrays(...arrays) : Stream.empty
}

const handlers = Group.toLayer({
  "orchestration.subscribeShell": (payload) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const head = scripted(script.shell, payload.requestCompletionMarker)
        if (script.shellEnd === "done") return head
        if (script.shellEnd === "fail") {
          return Stream.concat(head, Stream.fail(new ShellError({ message: "shell failed" })))
        }
        const queue = yield* Queue.unbounded()
        shells.add(queue)
        const live = Stream.fromQueue(queue).pipe(Stream.ensuring(Effect.sync(() => shells.delete(queue))))
        return Stream.concat(head, live)
      }),
    ),
  "orchestration.subscribeArchivedShell": (payload) =>
    Stream.unwrap(
      Effect.gen(function* () {
        if (script.noArchivedShell) {
          return Stream.fail(new ShellError({ message: "unknown method" }))
        }
        const head = scripted(script.archivedShell, payload.requestCompletionMarker)
        const queue = yield* Queue.unbounded()
        archivedShells.add(queue)
        const live = Stream.fromQueue(queue).pipe(
          Stream.ensuring(Effect.sync(() => archivedShells.delete(queue))),
        )
        return Stream.concat(head, live)
      }),
    ),
  "orchestration.subscribeThread": ({ threadId, requestCompletionMarker }) => {
    const thread = script.threads?.[threadId]
    if (!thread) return Stream.fail(new ThreadError({ threadId, message: `Thread ${threadId} not found` }))
    return Stream.concat(scripted(thread.stream, requestCompletionMarker), Stream.never)
  },
  "orchestration.getThreadProjection": ({ threadId }) => {
    const thread = script.threads?.[threadId]
    return thread?.projection
      ? Effect.succeed(thread.projection)
      : Effect.fail(new ThreadError({ threadId, message: `Thread ${threadId} not found` }))
  },
})

const bearer = (request) => {
  const header = request.headers["authorization"] ?? ""
  return header.startsWith("Bearer ") && header.slice(7) === script.token
}

const refuse = (status, code, extra = {}) =>
  HttpServerResponse.jsonUnsafe({ code, message: code, ...extra }, { status })

const main = Effect.gen(function* () {
  const websocket = yield* RpcServer.toHttpEffectWebsocket(Group, { disableTracing: true })
  const app = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://fake")
    if (url.pathname === "/ws") {
      if (url.searchParams.get("orchestrationProtocol") !== "2") {
        return refuse(426, "orchestration_protocol_incompatible", { orchestrationProtocolVersion: 2 })
      }
      const ticket = url.searchParams.get("wsTicket")
      const ticketOk = ticket && (tickets.get(ticket) ?? 0) > Date.now()
      if (ticket) tickets.delete(ticket) // one-time, spent or not
      if (!(ticketOk || (!ticket && bearer(request)))) return refuse(401, "auth_invalid")
      return yield* websocket
    }
    if (url.pathname === "/api/auth/websocket-ticket" && request.method === "POST") {
      if (!bearer(request)) return refuse(401, "auth_invalid")
      const ticket = randomUUID()
      const expiresAt = Date.now() + 30_000
      tickets.set(ticket, expiresAt)
      return HttpServerResponse.jsonUnsafe({ ticket, expiresAt: new Date(expiresAt).toISOString() })
    }
    if (url.pathname === "/.well-known/t3/environment") {
      return HttpServerResponse.jsonUnsafe({
        environmentId: "fake",
        label: "fake T3",
        serverVersion: "0.0.0-fake",
        orchestrationProtocolVersion: 2,
        capabilities: {},
      })
    }
    if (url.pathname === "/_fake/push" && request.method === "POST") {
      const body = yield* request.json
      const targets = body.archived ? archivedShells : shells
      for (const queue of targets) Queue.offerAllUnsafe(queue, body.chunk)
      return HttpServerResponse.jsonUnsafe({ subscribers: targets.size })
    }
    return HttpServerResponse.empty({ status: 404 })
  }).pipe(Effect.catchCause(() => Effect.succeed(HttpServerResponse.empty({ status: 500 }))))
  yield* HttpServer.serveEffect()(app)
  console.log(`fake T3 listening on ${port}`)
  return yield* Effect.never
})

main.pipe(
  Effect.scoped,
  Effect.provide(handlers),
  Effect.provide(RpcSerialization.layerJson),
  Effect.provide(NodeHttpServer.layer(() => http.createServer(), { port: Number(port), host: "127.0.0.1" })),
  NodeRuntime.runMain,
)
