import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StreamSink } from './lambda-runtime.ts';
import { functionBundle, functionHostBundle } from './function-bundles.ts';
import { FunctionFailure, timedOutMessage, type FailureKind, type FunctionSpec, type Invoker } from './invoker.ts';
import type { HostMessage, ParentMessage } from './function-host.ts';
import { asError } from '#shared/errors.ts';

// Lambda-like isolation for the local runtime. Each function runs in instances of its own: a
// child process (function-host.ts) that loads the function's bundle once and then takes one
// invocation at a time, as a Lambda execution environment does. A warm idle instance is reused
// (the most recently used first); when every instance of the function is busy a new one starts,
// up to a cap, beyond which invocations wait their turn; idle ones are stopped after a while.
//
// Limits are the manifest's: the heap is capped at the function's memoryMb and a watchdog stops
// an instance whose whole resident memory (heap, buffers, native) goes over it, as Lambda does;
// an invocation that outlives its timeoutSeconds has its instance stopped. A crash, an uncaught
// exception, running out of memory or a timeout ends that instance and fails that invocation
// alone (FunctionFailure); the next invocation gets a fresh instance. Everything else in the
// service (the gateway, other functions, the pollers) keeps running.

interface FunctionInstancesOptions {
  /** The functions' environment (what the stack sets on each function, pointed at this machine). */
  env: Record<string, string>;
  /** Instances of one function at most; further invocations wait for one to be free. Default 8. */
  maxInstancesPerFunction?: number;
  /** An instance idle this long is stopped (Lambda reclaims idle environments). Default 5 minutes. */
  idleMs?: number;
  /** Says why an instance ended (a crash, running out of memory, a timeout); silent when unset. */
  log?: (line: string) => void;
  /** Receives what the instances write to stdout and stderr (their log lines) instead of this process's own. */
  output?: (chunk: string) => void;
}

interface InstanceInfo {
  name: string;
  pid: number;
  busy: boolean;
}

export interface FunctionInstances extends Invoker {
  /** The live instances (for tests and diagnostics). */
  instances(name?: string): InstanceInfo[];
  /** Starts an idle instance of a function that has none (provisioned concurrency of one). */
  prewarm(fn: FunctionSpec): void;
}

interface Current {
  sink: StreamSink | undefined;
  /** Stream messages are handled one after another, each after the previous one's bytes were taken. */
  chain: Promise<unknown>;
  settle(outcome: { ok: true; value: unknown } | { ok: false; failure: FunctionFailure }): void;
}

interface Instance {
  fn: FunctionSpec;
  child: ChildProcess;
  ready: Promise<void>;
  busy: boolean;
  lastUsed: number;
  exited: boolean;
  /** Why the watchdog or the timer stopped it. */
  stoppedFor?: FailureKind;
  current?: Current;
}

const MIB = 1024 * 1024;
const PAGE_BYTES = 4096;
const MEMORY_CHECK_MS = 50;

/** Resident memory of a process from /proc (Linux); undefined elsewhere or once it is gone. */
async function residentBytes(pid: number): Promise<number | undefined> {
  const statm = await readFile(`/proc/${pid}/statm`, 'utf8').catch(() => undefined);
  const pages = Number(statm?.split(' ')[1]);
  return Number.isFinite(pages) ? pages * PAGE_BYTES : undefined;
}

export function startFunctionInstances(options: FunctionInstancesOptions): FunctionInstances {
  const maxPerFunction = options.maxInstancesPerFunction ?? 8;
  const idleMs = options.idleMs ?? 5 * 60_000;
  const byFunction = new Map<string, Instance[]>();
  const waiters = new Map<string, (() => void)[]>();
  let closed = false;

  const listOf = (name: string) => {
    const list = byFunction.get(name) ?? [];
    byFunction.set(name, list);
    return list;
  };

  function failureOnExit(inst: Instance, code: number | null, signal: NodeJS.Signals | null): FunctionFailure {
    const { fn } = inst;
    // V8 aborts when the heap limit is reached; the watchdog stops an instance over its memory.
    const kind: FailureKind = inst.stoppedFor ?? (signal === 'SIGABRT' || code === 134 ? 'out-of-memory' : 'crash');
    const message =
      kind === 'timeout'
        ? timedOutMessage(fn)
        : kind === 'out-of-memory'
          ? `Runtime.OutOfMemory: ${fn.name} used more than its ${fn.memoryMb} MB`
          : `Runtime.ExitError: ${fn.name} exited (${signal ? `signal ${signal}` : `code ${code}`})`;
    return new FunctionFailure(kind, message, fn.name);
  }

  function spawn(fn: FunctionSpec): Instance {
    const inst = { fn, busy: true, lastUsed: Date.now(), exited: false } as Instance;
    inst.ready = (async () => {
      const [host, bundle] = await Promise.all([functionHostBundle(), functionBundle(fn)]);
      if (closed) throw new FunctionFailure('crash', 'The local runtime is stopping', fn.name);
      inst.child = fork(host, [bundle, fn.name, String(fn.memoryMb)], {
        // Nothing of this process's own flags (jest's, tsx's loader): only the function's limits.
        execArgv: [`--max-old-space-size=${fn.memoryMb}`, '--enable-source-maps'],
        env: options.env,
        cwd: dirname(bundle), // Lambda runs a function from its bundle's directory
        serialization: 'advanced',
        stdio: ['ignore', options.output ? 'pipe' : 'inherit', options.output ? 'pipe' : 'inherit', 'ipc'],
      });
      const { child } = inst;
      if (options.output) {
        for (const out of [child.stdout, child.stderr]) {
          out?.setEncoding('utf8');
          out?.on('data', options.output);
        }
      }
      child.on('message', (m: HostMessage) => onMessage(inst, m));
      await new Promise<void>((resolve, reject) => {
        const onReady = (m: HostMessage) => {
          if (m.type !== 'ready') return;
          child.off('message', onReady);
          resolve();
        };
        child.on('message', onReady);
        child.once('exit', (code, signal) => reject(failureOnExit(inst, code, signal)));
      });
    })();
    inst.ready.then(
      () => inst.child.on('exit', (code, signal) => onExit(inst, code, signal)),
      () => onExit(inst, null, null),
    );
    return inst;
  }

  function onMessage(inst: Instance, m: HostMessage) {
    const current = inst.current;
    if (!current || m.type === 'ready') return;
    const { sink } = current;
    switch (m.type) {
      case 'content-type':
        current.chain = current.chain.then(() => sink?.contentType(m.value));
        break;
      case 'chunk':
        current.chain = current.chain.then(async () => {
          const alive = sink
            ? await sink.write(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength))
            : false;
          // The callback takes a send that fails because the child died meanwhile (EPIPE): its exit
          // is handled where it exits, and an unhandled 'error' would take this process down.
          if (inst.child.connected)
            inst.child.send({ type: 'ack', bytes: m.bytes.byteLength, gone: !alive } satisfies ParentMessage, () => {});
        });
        break;
      case 'end':
        current.chain = current.chain.then(() => sink?.end());
        break;
      case 'done':
        current.chain = current.chain.then(() => current.settle({ ok: true, value: m.result }));
        break;
      case 'failed':
        current.chain = current.chain.then(() =>
          current.settle({
            ok: false,
            failure: new FunctionFailure('error', `${m.error.name}: ${m.error.message}`, inst.fn.name),
          }),
        );
        break;
    }
  }

  function onExit(inst: Instance, code: number | null, signal: NodeJS.Signals | null) {
    if (inst.exited) return;
    inst.exited = true;
    const list = listOf(inst.fn.name);
    list.splice(list.indexOf(inst), 1);
    const current = inst.current;
    if (current) {
      const failure = failureOnExit(inst, code, signal);
      if (!closed) options.log?.(`[${inst.fn.name}] instance ${inst.child?.pid ?? '-'} ended: ${failure.message}`);
      current.chain = current.chain.then(() => current.settle({ ok: false, failure }));
    }
    wake(inst.fn.name);
  }

  function wake(name: string) {
    const next = waiters.get(name)?.shift();
    next?.();
  }

  async function acquire(fn: FunctionSpec): Promise<Instance> {
    for (;;) {
      if (closed) throw new FunctionFailure('crash', 'The local runtime is stopping', fn.name);
      const list = listOf(fn.name);
      const idle = list.filter((i) => !i.busy && !i.exited).sort((a, b) => b.lastUsed - a.lastUsed)[0];
      if (idle) {
        idle.busy = true;
        return idle;
      }
      if (list.length < maxPerFunction) {
        const inst = spawn(fn);
        list.push(inst);
        return inst;
      }
      await new Promise<void>((resolve) => {
        const list = waiters.get(fn.name) ?? [];
        waiters.set(fn.name, list);
        list.push(resolve);
      });
    }
  }

  function stop(inst: Instance, reason: FailureKind) {
    if (inst.exited || !inst.child) return;
    inst.stoppedFor ??= reason;
    inst.child.kill('SIGKILL');
  }

  // The memory watchdog, and the reaper of idle instances.
  let checking = false;
  const memoryCheck = setInterval(() => {
    if (checking || process.platform !== 'linux') return;
    checking = true;
    const busy = [...byFunction.values()].flat().filter((i) => i.current && i.child?.pid && !i.exited);
    void Promise.all(
      busy.map(async (inst) => {
        const rss = await residentBytes(inst.child.pid!);
        if (rss !== undefined && rss > inst.fn.memoryMb * MIB) stop(inst, 'out-of-memory');
      }),
    ).finally(() => (checking = false));
  }, MEMORY_CHECK_MS);
  memoryCheck.unref();
  const reaper = setInterval(
    () => {
      for (const inst of [...byFunction.values()].flat()) {
        if (!inst.busy && Date.now() - inst.lastUsed > idleMs) stop(inst, 'crash');
      }
    },
    Math.min(idleMs, 30_000),
  );
  reaper.unref();

  return {
    async invoke(fn, event, sink) {
      const inst = await acquire(fn);
      try {
        await inst.ready;
      } catch (err) {
        throw err instanceof FunctionFailure ? err : new FunctionFailure('crash', asError(err).message, fn.name);
      }
      const timeoutMs = fn.timeoutSeconds * 1000;
      const timer = setTimeout(() => stop(inst, 'timeout'), timeoutMs);
      try {
        return await new Promise<unknown>((resolve, reject) => {
          let settled = false;
          inst.current = {
            sink,
            chain: Promise.resolve(),
            settle(outcome) {
              if (settled) return;
              settled = true;
              if (outcome.ok) resolve(outcome.value);
              else reject(outcome.failure);
            },
          };
          if (inst.exited) return inst.current.settle({ ok: false, failure: failureOnExit(inst, null, null) });
          inst.child.send({ type: 'invoke', event, timeoutMs } satisfies ParentMessage, (err) => {
            // A child gone before the event reached it: the invocation fails as on its exit.
            if (err) inst.current?.settle({ ok: false, failure: failureOnExit(inst, null, null) });
          });
        });
      } finally {
        clearTimeout(timer);
        inst.current = undefined;
        inst.busy = false;
        inst.lastUsed = Date.now();
        if (!inst.exited) wake(fn.name);
      }
    },
    prewarm(fn) {
      const list = listOf(fn.name);
      if (closed || list.length) return;
      const inst = spawn(fn);
      list.push(inst);
      inst.ready.then(
        () => {
          inst.busy = false;
          inst.lastUsed = Date.now();
          wake(fn.name);
        },
        () => undefined,
      );
    },
    instances(name) {
      return [...byFunction.values()]
        .flat()
        .filter((i) => !i.exited && i.child?.pid !== undefined && (name === undefined || i.fn.name === name))
        .map((i) => ({ name: i.fn.name, pid: i.child.pid!, busy: i.busy }));
    },
    async close() {
      closed = true;
      clearInterval(memoryCheck);
      clearInterval(reaper);
      for (const list of waiters.values()) for (const resolve of list.splice(0)) resolve();
      const all = [...byFunction.values()].flat();
      await Promise.all(
        all.map(async (inst) => {
          await inst.ready.catch(() => undefined);
          if (inst.exited || !inst.child) return;
          const exited = new Promise((resolve) => inst.child.once('exit', resolve));
          stop(inst, 'crash');
          await exited;
        }),
      );
    },
  };
}
