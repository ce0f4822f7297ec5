// common.mjs — what every test file of the sfn suite shares: AWS's JavaScript
// SDK (@aws-sdk/client-sfn, pinned by package-lock.json) pointed at the
// server run.sh started, every raw answer checked against AWS's service model
// (Debian's awscli ships botocore's service-2.json: $MODEL), TAP output.
//
// Environment: ENDPOINT, KEY_ID / SECRET (operator + worker), READER_ID /
// READER_SECRET (reader only), REGION, ACCOUNT, MODEL, STORE (a label).
// A test file imports what it needs and ends with `finish()`.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import * as sfn from '@aws-sdk/client-sfn';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';

export const { ENDPOINT, KEY_ID, SECRET, READER_ID, READER_SECRET, REGION, ACCOUNT, MODEL, STORE } = process.env;
const model = JSON.parse(readFileSync(MODEL, 'utf8'));
export const arn = (kind, ...rest) => ['arn:aws:states', REGION, ACCOUNT, kind, ...rest].join(':');

let failures = 0;
export const ok = (cond, what) => {
  console.log(`${cond ? 'ok' : 'not ok'} - ${STORE}: ${what}`);
  if (!cond) failures++;
};

// ---- the raw answers, checked against the service model -------------------

const COMMON_ERRORS = new Set(['AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException',
  'IncompleteSignatureException', 'MissingAuthenticationTokenException', 'ValidationException',
  'UnknownOperationException', 'SerializationException', 'InternalFailure', 'ServiceUnavailable']);
// Members AWS added after the model Debian's awscli (2.9.19) ships: the
// versions (stateMachineVersionArn, revisionId), aliases and redrive (redrive*,
// ExecutionRedriven) of November 2023.
const NEWER_MEMBERS = {
  CreateStateMachineOutput: ['stateMachineVersionArn'],
  UpdateStateMachineOutput: ['stateMachineVersionArn', 'revisionId'],
  DescribeStateMachineOutput: ['revisionId'],
  DescribeStateMachineForExecutionOutput: ['revisionId'],
  DescribeExecutionOutput: ['stateMachineVersionArn', 'stateMachineAliasArn', 'redriveCount', 'redriveDate',
    'redriveStatus', 'redriveStatusReason'],
  HistoryEvent: ['executionRedrivenEventDetails'],
};
const NEWER_ENUM_VALUES = {
  HistoryEventType: ['ExecutionRedriven'],
};
const shapeFaults = [];
const checkedOps = new Set();
const unmodeledOps = new Set();

function checkShape(name, value, path) {
  const s = model.shapes[name];
  const fault = (why) => shapeFaults.push(`${path}: ${why}`);
  switch (s.type) {
    case 'structure': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return fault(`not an object (${name})`);
      for (const k of Object.keys(value)) {
        if (!s.members[k]) { if (!(NEWER_MEMBERS[name] || []).includes(k)) fault(`member "${k}" is not in ${name}`); }
        else checkShape(s.members[k].shape, value[k], `${path}.${k}`);
      }
      for (const r of s.required || []) if (!(r in value)) fault(`required member "${r}" of ${name} missing`);
      return;
    }
    case 'list':
      if (!Array.isArray(value)) return fault(`not an array (${name})`);
      value.forEach((v, i) => checkShape(s.member.shape, v, `${path}[${i}]`));
      return;
    case 'map':
      if (typeof value !== 'object' || value === null) return fault(`not a map (${name})`);
      return;
    case 'string':
      if (typeof value !== 'string') return fault(`not a string (${name})`);
      if (s.enum && !s.enum.includes(value) && !(NEWER_ENUM_VALUES[name] || []).includes(value)) fault(`"${value}" is not one of ${name}'s ${s.enum.join(', ')}`);
      if (s.max !== undefined && value.length > s.max) fault(`longer than ${s.max} (${name})`);
      return;
    case 'timestamp':
      if (typeof value !== 'number') fault(`a timestamp must be epoch seconds, not ${typeof value} (${name})`);
      return;
    case 'integer': case 'long':
      if (!Number.isInteger(value)) fault(`not an integer (${name})`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') fault(`not a boolean (${name})`);
      return;
    default:
      if (typeof value !== 'number' && s.type !== 'blob') fault(`unexpected ${typeof value} (${name})`);
  }
}

export function checkAnswer(target, status, text) {
  const op = target.replace('AWSStepFunctions.', '');
  const spec = model.operations[op];
  if (!spec) { unmodeledOps.add(op); return; }
  checkedOps.add(op);
  let body;
  try { body = JSON.parse(text); } catch { shapeFaults.push(`${op}: the answer is not JSON`); return; }
  if (status === 200) {
    if (spec.output) checkShape(spec.output.shape, body, op);
    return;
  }
  const type = body.__type;
  const modeled = (spec.errors || []).map((e) => e.shape);
  if (!modeled.includes(type) && !COMMON_ERRORS.has(type))
    shapeFaults.push(`${op}: error ${type} is not among its errors (${modeled.join(', ')})`);
  if (typeof body.message !== 'string') shapeFaults.push(`${op}: error without a message`);
  if (status !== 400 && status !== 403) shapeFaults.push(`${op}: error with HTTP ${status}`);
}

// A request handler that hands each raw answer to checkAnswer, then to the SDK.
const inner = new NodeHttpHandler();
const recorder = {
  async handle(request, options) {
    const out = await inner.handle(request, options);
    const chunks = [];
    for await (const c of out.response.body) chunks.push(c);
    const body = Buffer.concat(chunks);
    checkAnswer(request.headers['x-amz-target'], out.response.statusCode, body.toString('utf8'));
    out.response.body = Readable.from([body]);
    return out;
  },
  updateHttpClientConfig() {},
  httpHandlerConfigs() { return {}; },
};

export const client = (id, secret, extra = {}) => new sfn.SFNClient({
  endpoint: ENDPOINT, region: REGION, credentials: { accessKeyId: id, secretAccessKey: secret },
  requestHandler: recorder, maxAttempts: 1, disableHostPrefix: true, ...extra,
});
export const c = client(KEY_ID, SECRET);
export const send = (name, input, cl = c) => cl.send(new sfn[`${name}Command`](input));
// The error name a call ends with, or "ok".
export const outcome = async (p) => { try { await p; return 'ok'; } catch (e) { return e.name; } };
export const until = async (fn, ms = 20000) => {
  const end = Date.now() + ms;
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    const v = await fn();
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, pause));
  }
};

// Prints the shape check's line and exits: 1 when any check failed.
export function finish() {
  ok(shapeFaults.length === 0, `every answer of ${checkedOps.size} modeled actions has the service model's shape`
    + (shapeFaults.length ? `: ${shapeFaults.slice(0, 8).join('; ')}` : ''));
  if (unmodeledOps.size)
    console.log(`# ${STORE}: actions not in this service model (shapes unchecked): ${[...unmodeledOps].sort().join(', ')}`);
  process.exit(failures ? 1 : 0);
}
