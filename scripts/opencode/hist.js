// hist: capture every prompt sent to opencode into hist's prompt history.
//
// Install: `hist-capture --install opencode`, which copies this file to
// ~/.config/opencode/plugin/hist.js with the binaries' folder written into
// installedBinDir below. A copy made by hand (or into a project's
// .opencode/plugin/) needs that folder written there, or the binaries on
// opencode's PATH, or $HIST_BIN_DIR. Capture stays off until `hist-capture --enable` or
// GENTLE_PI_HISTORY_CAPTURE=1: hist-capture checks that on every call.
//
// On each user message (the "chat.message" hook, before opencode stores it)
// the plugin runs `hist-capture --cwd <session folder> --instance <id>
// --ts <ms> --src opencode --session <session id>` with the message's text
// on stdin (the session id is the hook's sessionID, as `opencode -s <id>`
// takes it, so the selector can print the command that resumes it; it is
// left out when it is not a plain id): the text parts the user
// sent, without the synthetic ones opencode adds (file contents, tool
// notes). One instance id per opencode process, so each process writes one
// capture file. Empty and command-like ("/name ...") prompts are skipped by
// hist-capture. A command or template (`/greet Ada`, `run --command`)
// reaches opencode's model expanded, and opencode stores only the
// expansion: that expansion is what is captured, the same text hist-seed
// imports from opencode.db.
//
// The prompt waits for hist-capture at most HIST_OPENCODE_TIMEOUT_MS
// (default 3000) and never fails because of it. HIST_OPENCODE_LOG=FILE
// appends one JSON line per call (arguments and exit code, never the text).
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { appendFileSync } from "node:fs"
import { join } from "node:path"

const instance = (globalThis.__histOpencodeInstance ??= randomUUID())

// The folder of the hist binaries. hist-capture --install writes its own
// folder here, so that opencode runs them whatever its PATH; a copy made by
// hand leaves it empty, and the binaries are looked for on PATH.
// $HIST_BIN_DIR, when set, comes first.
const installedBinDir = "";

function bin(name) {
  const dir = process.env.HIST_BIN_DIR || installedBinDir
  return dir ? join(dir, name) : name
}

function log(entry) {
  const file = process.env.HIST_OPENCODE_LOG
  if (!file) return
  try {
    appendFileSync(file, JSON.stringify({ t: Date.now(), pid: process.pid, ...entry }) + "\n", { mode: 0o600 })
  } catch {}
}

function capture(text, cwd, ts, session) {
  const args = ["--cwd", cwd, "--instance", instance, "--ts", String(ts)]
  if (typeof session === "string" && /^[A-Za-z0-9._:][A-Za-z0-9._:-]*$/.test(session)) args.push("--src", "opencode", "--session", session)
  const timeout = Number(process.env.HIST_OPENCODE_TIMEOUT_MS) || 3000
  return new Promise((resolve) => {
    let stderr = ""
    let done = false
    const finish = (code, error) => {
      if (done) return
      done = true
      clearTimeout(timer)
      log({ ev: "hist-capture", args, code, error, stderr: stderr.trim().split("\n")[0] || undefined })
      if (code !== 0 && stderr) process.stderr.write(stderr.endsWith("\n") ? stderr : stderr + "\n")
      if (error === "ENOENT") process.stderr.write(`hist: ${bin("hist-capture")} not found: run hist-capture --install opencode again from the installed binaries (hist-capture --status checks it)\n`)
      resolve()
    }
    const timer = setTimeout(() => finish(null, "timeout"), timeout)
    let child
    try {
      child = spawn(bin("hist-capture"), args, { cwd, stdio: ["pipe", "ignore", "pipe"], detached: true })
    } catch (e) {
      finish(null, String(e))
      return
    }
    child.on("error", (e) => finish(null, e.code || String(e)))
    child.stderr.on("data", (d) => {
      if (stderr.length < 8192) stderr += d.toString()
    })
    child.on("close", (code) => finish(code))
    child.stdin.on("error", () => {})
    // One trailing newline, which hist-capture strips: the text stays exact.
    child.stdin.end(text + "\n")
    child.unref()
    child.stderr.unref?.()
  })
}

export const HistPlugin = async ({ directory }) => {
  return {
    "chat.message": async (input, output) => {
      try {
        const message = output?.message
        if (message && message.role !== "user") return
        const parts = (output?.parts ?? []).filter((p) => p?.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string")
        if (parts.length === 0) return
        const text = parts.map((p) => p.text).join("\n")
        const ts = message?.time?.created ?? Date.now()
        await capture(text, directory || process.cwd(), ts, input?.sessionID ?? message?.sessionID)
      } catch (e) {
        log({ ev: "error", error: String(e) })
      }
    },
  }
}
