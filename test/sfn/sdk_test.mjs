// sdk_test.mjs — genroc's Step Functions endpoint driven by AWS's JavaScript
// SDK through every action it had first: state machines, executions and their
// history, an activity worker as AWS's documentation writes one, a wrong
// secret, a replayed and an old signature (common.mjs: the client, the shape
// check, TAP).  run.sh starts the server.
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { ENDPOINT, KEY_ID, SECRET, READER_ID, READER_SECRET, REGION, ACCOUNT, STORE, arn, ok, client, c, send, outcome,
  until, checkAnswer, finish } from './common.mjs';


// ---- state machines -------------------------------------------------------

const tag = `${STORE}${Date.now() % 100000}`;
const flow = {
  Comment: 'every state type',
  StartAt: 'P',
  States: {
    P: { Type: 'Pass', Result: { x: 1 }, ResultPath: '$.p', Next: 'T' },
    T: { Type: 'Task', Resource: 'genroc:fail', Retry: [{ ErrorEquals: ['Nope'], MaxAttempts: 1 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.err', Next: 'C' }], End: true },
    C: { Type: 'Choice', Choices: [{ Variable: '$.go', BooleanEquals: true, Next: 'W' }], Default: 'F' },
    W: { Type: 'Wait', Seconds: 0, Next: 'Par' },
    Par: { Type: 'Parallel', ResultPath: '$.par', Next: 'M',
      Branches: [{ StartAt: 'B', States: { B: { Type: 'Pass', Result: 'b', End: true } } }] },
    M: { Type: 'Map', ItemsPath: '$.items', ResultPath: '$.m', Next: 'S',
      Iterator: { StartAt: 'I', States: { I: { Type: 'Task', Resource: 'genroc:noop', End: true } } } },
    S: { Type: 'Succeed' },
    F: { Type: 'Fail', Error: 'E', Cause: 'x' },
  },
};
const name = `flow-${tag}`;
const machine = arn('stateMachine', name);
const role = `arn:aws:iam::${ACCOUNT}:role/x`;
const created = await send('CreateStateMachine', { name, definition: JSON.stringify(flow), roleArn: role });
ok(created.stateMachineArn === machine && created.creationDate instanceof Date, 'CreateStateMachine answers the ARN and date');
ok((await send('CreateStateMachine', { name, definition: JSON.stringify(flow), roleArn: role })).stateMachineArn === machine,
  'CreateStateMachine again with the same definition answers the same machine');
ok(await outcome(send('CreateStateMachine', { name, definition: JSON.stringify({ ...flow, Comment: 'other' }), roleArn: role }))
  === 'StateMachineAlreadyExists', 'CreateStateMachine of a taken name with another definition: StateMachineAlreadyExists');
ok(await outcome(send('CreateStateMachine', { name: `bad-${tag}`, definition: '{"StartAt":"X","States":{}}', roleArn: role }))
  === 'InvalidDefinition', 'an invalid definition: InvalidDefinition');
ok(await outcome(send('CreateStateMachine', { name: 'a b', definition: JSON.stringify(flow), roleArn: role })) === 'InvalidName',
  'a name with a space: InvalidName');
const described = await send('DescribeStateMachine', { stateMachineArn: machine });
ok(described.name === name && JSON.parse(described.definition).StartAt === 'P' && described.status === 'ACTIVE',
  'DescribeStateMachine answers the definition');
ok(await outcome(send('DescribeStateMachine', { stateMachineArn: arn('stateMachine', `none-${tag}`) })) === 'StateMachineDoesNotExist',
  'DescribeStateMachine of no machine: StateMachineDoesNotExist');
ok(await outcome(send('DescribeStateMachine', { stateMachineArn: 'arn:aws:states:xx:1:stateMachine:a' })) === 'InvalidArn',
  'an ARN of another region: InvalidArn');
const updated = await send('UpdateStateMachine', { stateMachineArn: machine, definition: JSON.stringify({ ...flow, Comment: 'v2' }), publish: true });
ok(updated.stateMachineVersionArn === `${machine}:2` && updated.updateDate instanceof Date, 'UpdateStateMachine makes version 2');
const published = await send('PublishStateMachineVersion', { stateMachineArn: machine });
ok(published.stateMachineVersionArn === `${machine}:2`, 'PublishStateMachineVersion answers the newest version');
const versions = await send('ListStateMachineVersions', { stateMachineArn: machine, maxResults: 1 });
const versions2 = await send('ListStateMachineVersions', { stateMachineArn: machine, maxResults: 1, nextToken: versions.nextToken });
ok(versions.stateMachineVersions[0].stateMachineVersionArn === `${machine}:2` && versions2.stateMachineVersions[0].stateMachineVersionArn === `${machine}:1`
  && !versions2.nextToken, 'ListStateMachineVersions pages newest first');
const v1 = await send('DescribeStateMachine', { stateMachineArn: `${machine}:1` });
ok(JSON.parse(v1.definition).Comment === 'every state type', 'DescribeStateMachine of a version ARN answers that version');
const machines = [];
let token;
do {
  const page = await send('ListStateMachines', { maxResults: 1, nextToken: token });
  machines.push(...page.stateMachines.map((m) => m.name));
  token = page.nextToken;
} while (token);
ok(machines.includes(name) && new Set(machines).size === machines.length, 'ListStateMachines pages through every machine once');
const valid = await send('ValidateStateMachineDefinition', { definition: JSON.stringify(flow) });
const invalid = await send('ValidateStateMachineDefinition', { definition: JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', Next: 'Q' } } }) });
ok(valid.result === 'OK' && invalid.result === 'FAIL' && invalid.diagnostics[0].severity === 'ERROR'
  && /States/.test(invalid.diagnostics[0].location || ''), 'ValidateStateMachineDefinition: OK, and FAIL with a located diagnostic');
ok(await outcome(send('DeleteStateMachine', { stateMachineArn: `${machine}:1` })) === 'ValidationException',
  'DeleteStateMachine of a version ARN is refused (DeleteStateMachineVersion deletes a version)');

// ---- executions -----------------------------------------------------------

const exec = arn('execution', name, 'one');
const started = await send('StartExecution', { stateMachineArn: machine, name: 'one', input: JSON.stringify({ go: true, items: [1, 2, 3] }) });
ok(started.executionArn === exec && started.startDate instanceof Date, 'StartExecution answers the execution ARN');
ok(await outcome(send('StartExecution', { stateMachineArn: machine, input: '{' })) === 'InvalidExecutionInput',
  'input that is not JSON: InvalidExecutionInput');
const done = await until(async () => {
  const d = await send('DescribeExecution', { executionArn: exec });
  return d.status !== 'RUNNING' && d;
});
ok(done && done.status === 'SUCCEEDED' && JSON.parse(done.output).m.length === 3 && done.stopDate instanceof Date,
  'DescribeExecution: SUCCEEDED with its output');
ok(await outcome(send('DescribeExecution', { executionArn: arn('execution', name, 'nope') })) === 'ExecutionDoesNotExist',
  'DescribeExecution of no execution: ExecutionDoesNotExist');
const forExec = await send('DescribeStateMachineForExecution', { executionArn: exec });
ok(forExec.stateMachineArn === machine && JSON.parse(forExec.definition).Comment === 'v2', 'DescribeStateMachineForExecution answers the version it ran');

const history = await send('GetExecutionHistory', { executionArn: exec, maxResults: 1000 });
const all = history.events.map((e) => e.type);
// the Map's items run side by side: their events, in any order, between MapStateStarted and MapStateSucceeded
const from = all.indexOf('MapStateStarted') + 1, to = all.indexOf('MapStateSucceeded');
const items = all.slice(from, to).sort();
const types = [...all.slice(0, from), ...all.slice(to)];
const item = ['MapIterationStarted', 'TaskStateEntered', 'TaskScheduled', 'TaskStarted', 'TaskSucceeded', 'TaskStateExited', 'MapIterationSucceeded'];
const want = ['ExecutionStarted', 'PassStateEntered', 'PassStateExited', 'TaskStateEntered', 'TaskScheduled', 'TaskStarted',
  'TaskFailed', 'TaskStateExited', 'ChoiceStateEntered', 'ChoiceStateExited', 'WaitStateEntered', 'WaitStateExited',
  'ParallelStateEntered', 'ParallelStateStarted', 'PassStateEntered', 'PassStateExited', 'ParallelStateSucceeded',
  'ParallelStateExited', 'MapStateEntered', 'MapStateStarted', 'MapStateSucceeded', 'MapStateExited', 'SucceedStateEntered',
  'SucceedStateExited', 'ExecutionSucceeded'];
ok(JSON.stringify(types) === JSON.stringify(want) && JSON.stringify(items) === JSON.stringify([...item, ...item, ...item].sort()),
  `GetExecutionHistory's event types (${all.join(' ')})`);
ok(history.events.every((e, i) => e.id === i + 1 && e.previousEventId < e.id), 'event ids count from 1, previousEventId an earlier one');
const mapStartedId = history.events.find((e) => e.type === 'MapStateStarted').id;
ok(history.events.filter((e) => e.type === 'MapIterationStarted').every((e) => e.previousEventId === mapStartedId)
  && history.events.slice(0, 5).every((e, i) => e.previousEventId === i),
  'previousEventId: the one before in a line of states, the MapStateStarted for an iteration\'s first');
ok(JSON.parse(history.events[0].executionStartedEventDetails.input).items.length === 3
  && history.events.find((e) => e.type === 'MapStateStarted').mapStateStartedEventDetails.length === 3
  && history.events.find((e) => e.type === 'TaskFailed').taskFailedEventDetails.error === 'States.TaskFailed',
  'the ...EventDetails carry input, Map length, the task error');
const reversed = await send('GetExecutionHistory', { executionArn: exec, reverseOrder: true, maxResults: 5, includeExecutionData: false });
ok(reversed.events[0].type === 'ExecutionSucceeded' && reversed.events.length === 5 && reversed.nextToken
  && reversed.events[0].executionSucceededEventDetails.output === undefined, 'reverseOrder, maxResults and includeExecutionData false');
const rest = await send('GetExecutionHistory', { executionArn: exec, reverseOrder: true, maxResults: 1000, includeExecutionData: false, nextToken: reversed.nextToken });
ok(rest.events.length === all.length - 5 && rest.events.at(-1).type === 'ExecutionStarted', 'the next page of the history');
const bent = reversed.nextToken.slice(0, -2) + (reversed.nextToken.endsWith('A') ? 'BB' : 'AA');
ok(await outcome(send('GetExecutionHistory', { executionArn: exec, nextToken: bent })) === 'InvalidToken', 'a changed nextToken: InvalidToken');

// A Fail state, a wait to stop, listing by status.
const failing = await send('StartExecution', { stateMachineArn: machine, input: JSON.stringify({ go: false }) });
const waitName = `wait-${tag}`;
await send('CreateStateMachine', { name: waitName, roleArn: role,
  definition: JSON.stringify({ StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 3600, End: true } } }) });
const waiting = await send('StartExecution', { stateMachineArn: arn('stateMachine', waitName), name: 'w1' });
// while it runs (it waits an hour): the same name and input answer it, another input is refused
const again = await send('StartExecution', { stateMachineArn: arn('stateMachine', waitName), name: 'w1' });
ok(again.executionArn === waiting.executionArn, 'StartExecution with the same name and input answers the same execution');
ok(await outcome(send('StartExecution', { stateMachineArn: arn('stateMachine', waitName), name: 'w1', input: '{"items":[]}' }))
  === 'ExecutionAlreadyExists', 'the same name with another input: ExecutionAlreadyExists');
const stopped = await send('StopExecution', { executionArn: waiting.executionArn, error: 'Op', cause: 'by the test' });
ok(await outcome(send('StartExecution', { stateMachineArn: machine, name: 'one', input: JSON.stringify({ go: true, items: [1, 2, 3] }) }))
  === 'ExecutionAlreadyExists', 'the name of an ended execution, even with its input: ExecutionAlreadyExists');
ok(stopped.stopDate instanceof Date, 'StopExecution answers the stop date');
const aborted = await send('DescribeExecution', { executionArn: waiting.executionArn });
ok(aborted.status === 'ABORTED', 'the stopped execution is ABORTED');
const abortedHistory = await send('GetExecutionHistory', { executionArn: waiting.executionArn });
ok(abortedHistory.events.at(-1).type === 'ExecutionAborted', 'its history ends with ExecutionAborted');
const failed = await until(async () => { const d = await send('DescribeExecution', { executionArn: failing.executionArn }); return d.status !== 'RUNNING' && d; });
ok(failed.status === 'FAILED' && failed.error === 'E' && failed.cause === 'x', 'a Fail state: FAILED with its error and cause');
const failTypes = (await send('GetExecutionHistory', { executionArn: failing.executionArn })).events.map((e) => e.type);
ok(failTypes.slice(-3).join(' ') === 'ChoiceStateExited FailStateEntered ExecutionFailed', `a Fail state's history (${failTypes.slice(-3).join(' ')})`);
const succeededList = await send('ListExecutions', { stateMachineArn: machine, statusFilter: 'SUCCEEDED' });
ok(succeededList.executions.length === 1 && succeededList.executions[0].executionArn === exec, 'ListExecutions with statusFilter SUCCEEDED');
const all1 = await send('ListExecutions', { stateMachineArn: machine, maxResults: 1 });
const all2 = await send('ListExecutions', { stateMachineArn: machine, maxResults: 1, nextToken: all1.nextToken });
ok(all1.executions.length === 1 && all2.executions.length === 1 && all1.executions[0].executionArn !== all2.executions[0].executionArn
  && !all2.nextToken, 'ListExecutions pages newest first');
const sync = await send('StartSyncExecution', { stateMachineArn: machine, input: JSON.stringify({ go: true, items: [7] }) });
ok(sync.status === 'SUCCEEDED' && JSON.parse(sync.output).m[0] === 7, 'StartSyncExecution answers the output');

// ---- activities: a worker as AWS's documentation writes one --------------

const actName = `act-${tag}`;
const act = await send('CreateActivity', { name: actName });
ok(act.activityArn === arn('activity', actName), 'CreateActivity answers the ARN');
ok((await send('DescribeActivity', { activityArn: act.activityArn })).name === actName, 'DescribeActivity');
ok((await send('ListActivities', {})).activities.some((a) => a.name === actName), 'ListActivities lists it');
const actMachine = `acts-${tag}`;
await send('CreateStateMachine', { name: actMachine, roleArn: role, definition: JSON.stringify({
  StartAt: 'Greet', States: { Greet: { Type: 'Task', Resource: act.activityArn, HeartbeatSeconds: 60, End: true } } }) });
ok(JSON.parse((await send('DescribeStateMachine', { stateMachineArn: arn('stateMachine', actMachine) })).definition).States.Greet.Resource
  === act.activityArn, 'a definition naming the activity by its ARN reads back the same');
const e1 = await send('StartExecution', { stateMachineArn: arn('stateMachine', actMachine), input: '{"who":"ada"}' });
const e2 = await send('StartExecution', { stateMachineArn: arn('stateMachine', actMachine), input: '{"who":"fail"}' });
// The loop of AWS's example worker: poll, work, heartbeat, report.
let handled = 0;
while (handled < 2) {
  const task = await send('GetActivityTask', { activityArn: act.activityArn, workerName: 'docs-worker' });
  if (!task.taskToken) continue;
  handled++;
  const input = JSON.parse(task.input);
  await send('SendTaskHeartbeat', { taskToken: task.taskToken });
  if (input.who === 'fail') {
    await send('SendTaskFailure', { taskToken: task.taskToken, error: 'Greeting.Refused', cause: 'asked to fail' });
  } else {
    await send('SendTaskSuccess', { taskToken: task.taskToken, output: JSON.stringify({ greeting: `hello ${input.who}` }) });
    ok(await outcome(send('SendTaskSuccess', { taskToken: task.taskToken, output: '{}' })) === 'TaskTimedOut',
      'a task token used twice: TaskTimedOut (its task has closed)');
  }
}
const r1 = await until(async () => { const d = await send('DescribeExecution', { executionArn: e1.executionArn }); return d.status !== 'RUNNING' && d; });
const r2 = await until(async () => { const d = await send('DescribeExecution', { executionArn: e2.executionArn }); return d.status !== 'RUNNING' && d; });
ok(r1.status === 'SUCCEEDED' && JSON.parse(r1.output).greeting === 'hello ada', 'the activity worker\'s success ends the execution');
ok(r2.status === 'FAILED' && r2.error === 'Greeting.Refused' && r2.cause === 'asked to fail', 'its failure fails the other with error and cause');
const actHistory = (await send('GetExecutionHistory', { executionArn: e1.executionArn })).events.map((e) => e.type);
ok(['ActivityScheduled', 'ActivityStarted', 'ActivitySucceeded'].every((t) => actHistory.includes(t)), `the activity's history (${actHistory.join(' ')})`);
ok(await outcome(send('SendTaskSuccess', { taskToken: 'nope', output: '{}' })) === 'InvalidToken', 'a text that is no task token: InvalidToken');
ok(await outcome(send('SendTaskHeartbeat', { taskToken: '0'.repeat(32) })) === 'TaskTimedOut',
  'a token of genroc\'s shape no task holds: TaskTimedOut');
await send('DeleteActivity', { activityArn: act.activityArn });

// ---- credentials ----------------------------------------------------------

ok(await outcome(send('ListStateMachines', {}, client(KEY_ID, SECRET.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A')))))
  === 'InvalidSignatureException', 'a wrong secret: InvalidSignatureException');
ok(await outcome(send('ListStateMachines', {}, client('GRKUNKNOWN0000', SECRET))) === 'UnrecognizedClientException',
  'an access key genroc did not issue: UnrecognizedClientException');
const reader = client(READER_ID, READER_SECRET);
ok((await send('ListStateMachines', {}, reader)).stateMachines.length > 0, 'a reader key lists machines');
ok(await outcome(send('StartExecution', { stateMachineArn: machine }, reader)) === 'AccessDeniedException',
  'a reader key may not start: AccessDeniedException');

// A request signed once, sent twice; one signed 20 minutes ago.
class Sha256 {
  constructor(secret) { this.h = secret ? createHmac('sha256', secret) : createHash('sha256'); }
  update(d) { this.h.update(d); }
  async digest() { return new Uint8Array(this.h.digest()); }
}
const signer = new SignatureV4({ service: 'states', region: REGION, sha256: Sha256, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
const url = new URL(ENDPOINT);
const signed = (date) => signer.sign({
  method: 'POST', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: '/',
  headers: { host: url.host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AWSStepFunctions.ListStateMachines' },
  body: '{}',
}, { signingDate: date });
const post = async (req) => {
  const r = await fetch(ENDPOINT, { method: 'POST', headers: req.headers, body: req.body });
  const body = await r.json();
  checkAnswer('AWSStepFunctions.ListStateMachines', r.status, JSON.stringify(body));
  return { status: r.status, body };
};
const once = await signed(new Date());
const first = await post(once);
const replay = await post(once);
ok(first.status === 200 && replay.status === 400 && replay.body.__type === 'InvalidSignatureException',
  'the same signed request a second time is refused');
const old = await post(await signed(new Date(Date.now() - 20 * 60 * 1000)));
ok(old.status === 400 && old.body.__type === 'InvalidSignatureException' && /Signature expired/.test(old.body.message),
  'a request signed 20 minutes ago is refused (Signature expired)');

finish();
