// A jobconform process-protocol child (version 2) over real Node.js libraries:
//
// - p-queue runs the jobs: concurrency, the order jobs start in, and cancellation through
//   the AbortSignal it hands each task;
// - retry (node-retry) computes the backoff before a failed job runs again;
// - @sinonjs/fake-timers is the only clock: every request carries the kit's time (`now`),
//   and the child ticks the runtime's fake clock to it, which fires the retry timers due.
//
//     node child.mjs          (the kit starts it: JOBCONFORM_PROCESS_COMMAND="node child.mjs")
//
// The protocol is docs/process-protocol.md. This child claims the lifecycle and retry
// areas: the kit reports every other area "not claimed". Each library is used as it is;
// expected-failures.yaml lists where their behaviour differs from the spec, and why.

import { readFileSync } from 'node:fs';
import readline from 'node:readline';
import PQueue from 'p-queue';
import retry from 'retry';
import FakeTimers from '@sinonjs/fake-timers';

const CLAIMS = ['lifecycle', 'retry'];
// The libraries this child wraps, with the versions npm installed: the report names them.
// Read from each package's own package.json (p-queue's exports do not list it for import).
const LIBRARIES = Object.fromEntries(['p-queue', 'retry', '@sinonjs/fake-timers'].map((name) => [
  name,
  JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version,
]));

// -- the pipe: one JSON object per line --------------------------------------------------------

const lines = readline.createInterface({ input: process.stdin, terminal: false });
const buffered = [];
const waiting = [];
let closed = false;
lines.on('line', (line) => (waiting.length ? waiting.shift()(line) : buffered.push(line)));
lines.on('close', () => {
  closed = true;
  while (waiting.length) waiting.shift()(null);
});

function nextLine() {
  if (buffered.length) return Promise.resolve(buffered.shift());
  if (closed) return Promise.resolve(null);
  return new Promise((resolve) => waiting.push(resolve));
}

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

// An error the protocol names: its `type` is one the kit knows (CapacityExceeded, ...).
class WireError extends Error {
  constructor(type, message, data) {
    super(message);
    this.type = type;
    this.data = data;
  }
}

// -- calling the kit's objects back (a task body's `decided`, `run`, `next_attempt`) ------------

let callbacks = 0;

async function callKit(handle, op, args = {}) {
  const number = ++callbacks;
  send({ callback: number, op, object: handle, args });
  const line = await nextLine();
  if (line === null) throw new Error(`the kit closed the pipe during callback ${number}`);
  const reply = JSON.parse(line);
  if (reply.callback !== number) throw new Error(`expected the reply to callback ${number}: ${line}`);
  if (reply.ok) return reply.result;
  if (reply.error.type === 'ScriptedError') {
    // The body's scripted exception: its type name is the kit's, as a real error's would be.
    const error = new Error(reply.error.message);
    error.name = reply.error.data.error_type;
    error.retryAfterMs = reply.error.data.retry_after_ms;
    throw error;
  }
  throw new Error(`the kit's ${op} failed: ${reply.error.type}: ${reply.error.message}`);
}

// -- time: the kit's readings, microseconds since the epoch --------------------------------------

function micros(text) {
  // "2026-01-01T00:00:05.000001Z": Date keeps milliseconds, the kit sends microseconds.
  const match = /\.(\d{6})Z$/.exec(text);
  if (!match) throw new WireError('ProtocolError', `now must be UTC with microseconds: ${text}`);
  return Date.parse(text.replace(/\.\d{6}Z$/, 'Z')) * 1000 + Number(match[1]);
}

// -- the runtime: p-queue behind the adapter protocol's job runtime ------------------------------

class QueueRuntime {
  constructor(settings, now) {
    this.maxTasks = settings.max_tasks;
    // The queue starts jobs only at the kit's dispatch points: it is paused otherwise, so a
    // job that ends does not start the next one before the kit says so.
    this.queue = new PQueue({ concurrency: settings.max_concurrent, autoStart: false });
    // One tick of this fake clock is a microsecond, so retry timers are exact at the kit's
    // resolution (a millisecond delay is set as a thousand ticks).
    this.clock = FakeTimers.createClock(micros(now));
    this.now = now;
    this.jobs = new Map();
    this.submitted = 0;
    this.counters = { processed: 0, failed: 0, cancelled: 0 };
    this.shutDown = false;
    this.ending = []; // jobs whose task was just told to end: the answer waits for them
  }

  async advance(now) {
    const target = micros(now);
    if (target < this.clock.now) throw new WireError('ProtocolError', `time went back to ${now}`);
    this.now = now;
    await this.clock.tickAsync(target - this.clock.now); // fires the retry timers due
  }

  // Wait until every task told to end has ended and been recorded, so the answer shows it.
  async flush() {
    while (this.ending.length) await this.ending.shift().done;
  }

  submit({ script, retry: policy }) {
    if (this.shutDown) throw new WireError('RuntimeShutDown', 'the runtime is shut down');
    if (this.maxTasks !== null && this.jobs.size >= this.maxTasks) {
      throw new WireError('CapacityExceeded', `the task cap of ${this.maxTasks} is reached`);
    }
    this.submitted += 1;
    const job = {
      id: `job-${this.submitted}`, order: this.submitted, script, policy,
      status: 'queued', submittedAt: this.now, startedAt: null, finishedAt: null,
      result: null, error: null, retryCount: 0, ending: null, controller: null, timer: null,
    };
    this.jobs.set(job.id, job);
    this.enqueue(job);
    return job.id;
  }

  enqueue(job) {
    job.controller = new AbortController();
    // p-queue runs the highest priority first: the oldest submission, as dispatch asks.
    job.done = this.queue.add(({ signal }) => this.body(job, signal),
      { signal: job.controller.signal, priority: -job.order })
      .then((result) => this.ended(job, null, result), (error) => this.ended(job, error, null));
  }

  body(job, signal) {
    job.status = 'running';
    job.startedAt = this.now;
    return new Promise((resolve, reject) => {
      job.ending = { resolve, reject };
      if (job.script.honours_cancellation) {
        signal.addEventListener('abort', () => reject(signal.reason));
      }
    });
  }

  async ended(job, error, result) {
    job.ending = null;
    if (job.status !== 'running') return; // cancelled while queued: p-queue skipped it
    if (error === null) return this.finish(job, 'succeeded', result, null);
    if (error.name === 'AbortError') return this.finish(job, 'cancelled', null, null);
    const policy = job.policy;
    if (policy && job.retryCount < policy.max_retries && !policy.non_retryable.includes(error.name)) {
      const delay = computeDelay(policy, job.retryCount);
      job.retryCount += 1;
      job.status = 'queued';
      job.timer = this.clock.setTimeout(() => { job.timer = null; this.enqueue(job); }, delay * 1000);
      await callKit(job.script.handle, 'TaskBody.next_attempt');
      return undefined;
    }
    return this.finish(job, 'failed', null, `${error.name}: ${error.message}`);
  }

  finish(job, status, result, error) {
    Object.assign(job, { status, result, error, finishedAt: this.now });
    if (status === 'cancelled') this.counters.cancelled += 1;
    else this.counters.processed += 1;
    if (status === 'failed') this.counters.failed += 1;
  }

  async dispatch() {
    this.queue.start(); // starts queued jobs into the free slots, synchronously
    this.queue.pause();
    await this.settle();
  }

  async settle() {
    // A running body ends once the kit has decided its outcome.
    for (const job of [...this.jobs.values()]) {
      if (job.status !== 'running' || job.ending === null) continue;
      if (!(await callKit(job.script.handle, 'TaskBody.decided'))) continue;
      const { resolve, reject } = job.ending;
      try {
        resolve(await callKit(job.script.handle, 'TaskBody.run'));
      } catch (error) {
        reject(error);
      }
      this.ending.push(job);
    }
    await this.flush();
  }

  async cancel({ job_id: id }) {
    const job = this.jobs.get(id);
    if (!job || !['queued', 'running'].includes(job.status) || job.controller.signal.aborted) {
      return false;
    }
    if (job.status === 'queued') {
      this.clock.clearTimeout(job.timer);
      this.finish(job, 'cancelled', null, null);
    } else {
      this.ending.push(job);
    }
    job.controller.abort(); // p-queue rejects the task at once, its body running or not
    await this.flush();
    return true;
  }

  record(job) {
    return {
      job_id: job.id, status: job.status, submitted_at: job.submittedAt,
      started_at: job.startedAt, finished_at: job.finishedAt, result: job.result,
      error: job.error, retry_count: job.retryCount, max_retries: job.policy?.max_retries ?? 0,
      last_heartbeat: null, redelivery_count: null, alerted: null, poisoned: null,
    };
  }

  get({ job_id: id }) {
    const job = this.jobs.get(id);
    return job ? this.record(job) : null;
  }

  getResult({ job_id: id }) {
    const job = this.jobs.get(id);
    if (!job) throw new WireError('JobNotFound', `no job ${id}`, { key: id });
    if (job.status !== 'succeeded') {
      throw new WireError('JobNotCompleted', `job ${id} is not completed (status=${job.status})`,
        { status: job.status });
    }
    return job.result;
  }

  listJobs({ status }) {
    return [...this.jobs.values()].filter((job) => status === null || job.status === status)
      .map((job) => this.record(job));
  }

  cleanup({ max_age_seconds: maxAge }) {
    const cutoff = micros(this.now) - maxAge * 1e6;
    let removed = 0;
    for (const job of [...this.jobs.values()]) {
      if (job.finishedAt !== null && micros(job.finishedAt) <= cutoff) {
        this.jobs.delete(job.id);
        removed += 1;
      }
    }
    return removed;
  }

  async shutdown() {
    for (const job of this.jobs.values()) {
      if (job.status === 'queued' || job.status === 'running') {
        this.clock.clearTimeout(job.timer);
        this.finish(job, 'cancelled', null, null);
        job.controller.abort();
      }
    }
    this.queue.clear();
    this.shutDown = true;
    await this.flush();
  }

  health() {
    const count = (status) => [...this.jobs.values()].filter((job) => job.status === status).length;
    return { queued: count('queued'), running: count('running'), total: this.jobs.size, ...this.counters };
  }
}

// node-retry's exponential timeout for the zero-indexed attempt, without its randomisation.
function computeDelay(policy, attempt) {
  return retry.createTimeout(attempt, {
    minTimeout: policy.retry_delay_ms, factor: policy.backoff_multiplier,
    maxTimeout: policy.max_retry_delay_ms, randomize: false,
  });
}

// -- the objects the kit calls ---------------------------------------------------------------------

const runtimes = new Map();
let opened = 0;

const METHODS = {
  'Backend.open': async (object, args, now) => {
    opened += 1;
    const handle = `jobruntime-${opened}`;
    runtimes.set(handle, new QueueRuntime(args.settings, now));
    return { handle };
  },
  'JobRuntime.submit': (runtime, args) => runtime.submit(args),
  'JobRuntime.dispatch': async (runtime) => { await runtime.dispatch(); return null; },
  'JobRuntime.settle': async (runtime) => { await runtime.settle(); return null; },
  'JobRuntime.cancel': (runtime, args) => runtime.cancel(args),
  'JobRuntime.get': (runtime, args) => runtime.get(args),
  'JobRuntime.get_result': (runtime, args) => runtime.getResult(args),
  'JobRuntime.list_jobs': (runtime, args) => runtime.listJobs(args),
  'JobRuntime.cleanup': (runtime, args) => runtime.cleanup(args),
  'JobRuntime.shutdown': async (runtime) => { await runtime.shutdown(); return null; },
  'JobRuntime.health': (runtime) => runtime.health(),
  'JobRuntime.close': (runtime, args, now, handle) => { runtimes.delete(handle); return null; },
  'JobRuntime.compute_delay_ms': (runtime, args) => computeDelay(args.policy, args.attempt),
};

async function answer(request) {
  const { id, op, args } = request;
  if (op === 'hello') {
    if (args.protocol !== 2) throw new WireError('ProtocolError', `this child speaks protocol 2, not ${args.protocol}`);
    return { protocol: 2, name: 'node-p-queue', profile: 'canonical', capabilities: CLAIMS, libraries: LIBRARIES };
  }
  if (op === 'goodbye') return null;
  const method = METHODS[op];
  if (!method) throw new WireError('ProtocolError', `request ${id}: this child has no ${op}`);
  let runtime = null;
  if (request.object !== 'backend') {
    runtime = runtimes.get(request.object);
    if (!runtime) throw new WireError('ProtocolError', `no object ${request.object}`);
    await runtime.advance(request.now);
  }
  return method(runtime, args, request.now, request.object);
}

async function serve() {
  let number = 0;
  for (let line = await nextLine(); line !== null; line = await nextLine()) {
    number += 1;
    let request = null;
    try {
      request = JSON.parse(line);
      send({ id: request.id, ok: true, result: await answer(request) });
    } catch (error) {
      const known = error instanceof WireError;
      if (!known) process.stderr.write(`${error.stack}\n`);
      const message = request === null ? `line ${number} from the kit is not JSON: ${error.message}` : error.message;
      send({
        id: Number.isInteger(request?.id) ? request.id : null, ok: false,
        error: { type: known ? error.type : (request === null ? 'ProtocolError' : 'InternalError'), message, ...(error.data ? { data: error.data } : {}) },
      });
    }
    if (request?.op === 'goodbye') break;
  }
  process.exit(0);
}

serve();
