/**
 * hist: prompt history for pi.
 *
 * Install: `hist-capture --install pi`, which copies this file to
 * ~/.pi/agent/extensions/hist.ts with the binaries' folder written into
 * installedBinDir below. A copy made by hand (or `pi -e ./hist.ts`) needs
 * that folder written there, or the binaries on pi's PATH, or
 * $HIST_BIN_DIR. Capture stays off until `hist-capture --enable` or
 * GENTLE_PI_HISTORY_CAPTURE=1; the binaries check that on every call, so
 * with capture off this extension stores nothing.
 *
 * What it does:
 *   - session_start: runs `hist-seed --project <cwd>` in the background (the
 *     one-time import of this project's pi sessions); pi never waits for it.
 *   - input: runs `hist-capture --cwd <cwd> --instance <id> --ts <ms>
 *     --src pi --session <pi's session id>` with the raw typed text on stdin,
 *     for every prompt (hist-capture itself skips empty and command-like
 *     "/name ..." prompts). <id> is one UUID per pi process, so each process
 *     writes one capture file. The session id (pi's, as `pi --session <id>`
 *     takes it) lets hist-pick print the command that resumes the session;
 *     it is left out when pi has none that hist-capture takes as a plain
 *     id. Captures run one at a time in the background, in order; the
 *     prompt is never delayed.
 *   - session_shutdown: waits (bounded) for pending captures and the seed,
 *     then runs `hist-compact --project <cwd> --current <id>`.
 *   - alt+r (or $HIST_PI_PICK_KEY; "off" disables it) and the /hist command:
 *     hand the terminal to `hist-pick --project <cwd> --no-resume-key` and put
 *     the chosen prompt in pi's editor. The editor's text, if any, is the
 *     initial query. The selector offers no resume key here: its shell
 *     command has no place in pi's editor.
 *
 * Environment:
 *   HIST_BIN_DIR               folder of the hist binaries (default:
 *                              installedBinDir, else PATH)
 *   HIST_PI_PICK_KEY           the selector key (default alt+r; "off": none)
 *   HIST_PI_SHUTDOWN_WAIT_MS   how long shutdown waits for pending work
 *                              (default 10000)
 *   HIST_PI_LOG                append a JSON line per hist call to this file
 *                              (arguments and exit codes, never prompt text)
 */
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type Result = { code: number | null; signal: string | null; error?: string; stderr: string; ms: number };

// One capture file per pi process: the id lives on globalThis so that a
// /reload or /new, which loads this module again, keeps it.
const state: {
	instance: string;
	seeded: Set<string>;
	queue: Promise<unknown>;
	pending: Set<Promise<unknown>>;
	missing: Set<string>;
} = ((globalThis as any).__histPiState ??= {
	instance: randomUUID(),
	seeded: new Set<string>(),
	queue: Promise.resolve(),
	pending: new Set<Promise<unknown>>(),
	missing: new Set<string>(),
});

// The folder of the hist binaries. hist-capture --install writes its own
// folder here, so that pi runs them whatever its PATH; a copy made by hand
// leaves it empty, and the binaries are looked for on PATH.
// $HIST_BIN_DIR, when set, comes first.
const installedBinDir = "";

function bin(name: string): string {
	const dir = process.env.HIST_BIN_DIR || installedBinDir;
	return dir ? join(dir, name) : name;
}

function log(entry: Record<string, unknown>): void {
	const file = process.env.HIST_PI_LOG;
	if (!file) return;
	try {
		appendFileSync(file, JSON.stringify({ t: Date.now(), pid: process.pid, ...entry }) + "\n", { mode: 0o600 });
	} catch {
		// The debug log is best effort.
	}
}

function firstLine(s: string): string {
	return s.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
}

/**
 * Runs one hist binary without a shell, in its own process group (so a
 * signal meant for pi's terminal does not cut it short), with `input` on
 * stdin. Resolves when it exits; never rejects. Nothing of it keeps pi's
 * event loop alive, so pi can exit while it runs. Background jobs that may
 * outlive pi (seed, compact) get no stderr pipe (`quietStderr`): a pipe whose
 * reader is gone would kill them with SIGPIPE at their next message.
 */
function run(name: string, args: string[], cwd: string, input?: string, quietStderr = false): Promise<Result> {
	const start = Date.now();
	return new Promise<Result>((resolve) => {
		let stderr = "";
		let settled = false;
		const done = (r: Omit<Result, "stderr" | "ms">) => {
			if (settled) return;
			settled = true;
			const res: Result = { ...r, stderr, ms: Date.now() - start };
			log({ ev: name, args, start, code: res.code, signal: res.signal, error: res.error, ms: res.ms, stderr: firstLine(stderr) || undefined });
			resolve(res);
		};
		let child;
		try {
			child = spawn(bin(name), args, {
				cwd,
				detached: true,
				stdio: [input === undefined ? "ignore" : "pipe", "ignore", quietStderr ? "ignore" : "pipe"],
			});
		} catch (e) {
			done({ code: null, signal: null, error: String(e) });
			return;
		}
		child.on("error", (e: NodeJS.ErrnoException) => done({ code: null, signal: null, error: e.code ?? String(e) }));
		child.stderr?.on("data", (d: Buffer) => {
			if (stderr.length < 8192) stderr += d.toString("utf8");
		});
		child.on("close", (code, signal) => done({ code, signal }));
		if (input !== undefined && child.stdin) {
			child.stdin.on("error", () => {}); // the child may exit without reading (capture off)
			child.stdin.end(input);
		}
		child.unref();
		(child.stderr as any)?.unref?.();
	});
}

/**
 * Tells the user when a call failed in a way that needs them: a binary that
 * cannot be started (once per binary), or an exit code not in `quiet`.
 */
function reportFailure(ctx: any, name: string, r: Result, quiet: number[] = []): void {
	if (r.code === 0 || (r.code !== null && quiet.includes(r.code))) return;
	let msg: string;
	if (r.error === "ENOENT") {
		if (state.missing.has(name)) return;
		state.missing.add(name);
		msg = `hist: ${bin(name)} not found: run hist-capture --install pi again from the installed binaries (hist-capture --status checks it)`;
	} else {
		msg =
			firstLine(r.stderr) ||
			`hist: ${name} failed (${r.error ?? r.signal ?? `exit ${r.code}`}): run it in a terminal to see why`;
	}
	try {
		if (ctx?.hasUI) ctx.ui.notify(msg, "warning");
		else process.stderr.write(msg + "\n");
	} catch {
		// A stale ctx after a session switch: nothing to tell.
	}
}

function track<T>(p: Promise<T>): Promise<T> {
	state.pending.add(p);
	p.finally(() => state.pending.delete(p));
	return p;
}

function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
	return new Promise<void>((resolve) => {
		const t = setTimeout(resolve, Math.max(0, ms));
		p.finally(() => {
			clearTimeout(t);
			resolve();
		});
	});
}

function shutdownWait(): number {
	const v = Number(process.env.HIST_PI_SHUTDOWN_WAIT_MS);
	return Number.isFinite(v) && v >= 0 ? v : 10000;
}

/** pi's session id, or "" when there is none or it is not a plain id. */
function sessionId(ctx: any): string {
	let id: unknown;
	try {
		id = ctx.sessionManager?.getSessionId?.();
	} catch {
		return "";
	}
	return typeof id === "string" && /^[A-Za-z0-9._:][A-Za-z0-9._:-]*$/.test(id) ? id : "";
}

/** Hands the terminal to hist-pick and returns the chosen prompt, if any. */
async function pick(ctx: any, query: string): Promise<void> {
	if (ctx.mode !== "tui") return;
	// No resume key: its shell command would land in pi's editor, and Enter
	// would send it to the model. (pi switches sessions only from a command,
	// by session file, which a record does not name.)
	const args = ["--project", ctx.cwd, "--no-resume-key"];
	if (query.trim() !== "") args.push("--query", query);
	let ui: any;
	const r = await ctx.ui.custom((tui: any, _theme: any, _kb: any, done: (v: any) => void) => {
		ui = tui;
		tui.stop();
		const res = spawnSync(bin("hist-pick"), args, {
			cwd: ctx.cwd,
			stdio: ["inherit", "pipe", "pipe"],
			encoding: "utf8",
			maxBuffer: 256 << 20,
		});
		tui.start();
		tui.requestRender(true);
		done(res);
		return { render: () => [], invalidate: () => {} };
	});
	if (!r) return;
	log({ ev: "hist-pick", args: args.slice(0, 3), code: r.status, error: r.error ? String((r.error as any).code ?? r.error) : undefined });
	if (r.error) {
		reportFailure(ctx, "hist-pick", { code: null, signal: null, error: (r.error as any).code ?? String(r.error), stderr: "", ms: 0 });
		return;
	}
	if (r.status === 0) {
		const text = (r.stdout as string).replace(/\n$/, "");
		if (text !== "") {
			ctx.ui.setEditorText(text);
			ui?.requestRender(true); // setEditorText alone does not redraw
		}
		return;
	}
	if (r.status === 1 || r.status === 130) return; // nothing chosen
	reportFailure(ctx, "hist-pick", { code: r.status, signal: r.signal, stderr: r.stderr as string, ms: 0 });
}

export default function hist(pi: ExtensionAPI) {
	pi.on("session_start", async (_event, ctx) => {
		const cwd = ctx.cwd;
		if (state.seeded.has(cwd)) return;
		state.seeded.add(cwd);
		// Not awaited: pi starts at once; shutdown waits for it (bounded).
		// Exit 4 (retry later) and 6 (a source not recognised) need nothing from the user.
		track(run("hist-seed", ["--project", cwd, "-q"], cwd, undefined, true).then((r) => reportFailure(ctx, "hist-seed", r, [4, 6])));
	});

	pi.on("input", async (event, ctx) => {
		if (event.source === "extension") return; // sent by an extension, not typed
		const text = event.text;
		if (typeof text !== "string" || text.trim() === "") return;
		const cwd = ctx.cwd;
		const ts = String(Date.now());
		// Text on stdin (no argument-size limit, no flag parsing of "-..."),
		// with one newline that hist-capture strips.
		const args = ["--cwd", cwd, "--instance", state.instance, "--ts", ts];
		// pi's session: the selector's resume key then offers `pi --session <id>`.
		const session = sessionId(ctx);
		if (session) args.push("--src", "pi", "--session", session);
		const job = state.queue.then(() => run("hist-capture", args, cwd, text + "\n"));
		state.queue = job.then((r) => reportFailure(ctx, "hist-capture", r));
		track(state.queue);
		return { action: "continue" };
	});

	pi.on("session_shutdown", async (_event, ctx) => {
		const deadline = Date.now() + shutdownWait();
		await withTimeout(Promise.all([...state.pending]), deadline - Date.now());
		const cwd = ctx.cwd;
		const r = await withResult(
			run("hist-compact", ["--project", cwd, "--current", state.instance], cwd, undefined, true),
			Math.max(deadline - Date.now(), 1000),
		);
		if (r) reportFailure(ctx, "hist-compact", r, [4]); // 4: the store was busy; the next shutdown retries
	});

	const key = process.env.HIST_PI_PICK_KEY ?? "alt+r";
	if (key !== "" && key !== "off") {
		pi.registerShortcut(key as any, {
			description: "Pick a prompt from hist's history into the editor",
			handler: async (ctx: any) => pick(ctx, ctx.ui.getEditorText?.() ?? ""),
		});
	}
	pi.registerCommand("hist", {
		description: "Pick a prompt from hist's history into the editor",
		handler: async (args: string, ctx: any) => pick(ctx, args ?? ""),
	});
}

/** Resolves with the result, or undefined once ms have passed (the child keeps running). */
function withResult(p: Promise<Result>, ms: number): Promise<Result | undefined> {
	return new Promise((resolve) => {
		const t = setTimeout(() => resolve(undefined), Math.max(0, ms));
		p.then((r) => {
			clearTimeout(t);
			resolve(r);
		});
	});
}
