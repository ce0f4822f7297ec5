// history_test.mjs — GetExecutionHistory read as AWS's: the event types in
// order (a Parallel's branches and a Map's iterations inside it), ids and
// previousEventId, each event's detail members, and each state's input and
// output (the log's steps replayed; none shown when a replay cannot agree
// with the log).  run.sh starts the server; common.mjs checks the shapes.
import { STORE, ACCOUNT, arn, ok, send, until, finish } from './common.mjs';

const tag = `${STORE}${Date.now() % 100000}`;
const role = `arn:aws:iam::${ACCOUNT}:role/x`;

async function run(name, definition, input) {
  await send('CreateStateMachine', { name, definition: JSON.stringify(definition), roleArn: role });
  const { executionArn } = await send('StartExecution', { stateMachineArn: arn('stateMachine', name), name: 'h', input: JSON.stringify(input) });
  const done = await until(async () => {
    const d = await send('DescribeExecution', { executionArn });
    return d.status !== 'RUNNING' && d;
  });
  const { events } = await send('GetExecutionHistory', { executionArn, maxResults: 1000 });
  return { done, events };
}
const details = (e) => Object.keys(e).filter((k) => k.endsWith('EventDetails'));
const members = (e) => { const d = details(e); return d.length ? Object.keys(e[d[0]]).sort().join(',') : ''; };

// ---- every kind of state ---------------------------------------------------

const flow = {
  StartAt: 'P',
  States: {
    P: { Type: 'Pass', Parameters: { 'n.$': '$.n', xs: [10, 20, 30] }, Next: 'T' },
    T: { Type: 'Task', Resource: 'genroc:fail', Parameters: { Error: 'Boom', Cause: 'why' },
      Retry: [{ ErrorEquals: ['Boom'], MaxAttempts: 1, IntervalSeconds: 1 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.err', Next: 'C' }], Next: 'C' },
    C: { Type: 'Choice', Choices: [{ Variable: '$.n', NumericEquals: 1, Next: 'W' }], Default: 'S' },
    W: { Type: 'Wait', Timestamp: '2020-01-01T00:00:00Z', Next: 'Par' },
    Par: { Type: 'Parallel', ResultPath: '$.par', Next: 'M', Branches: [
      { StartAt: 'B1', States: { B1: { Type: 'Pass', Result: 'one', End: true } } },
      { StartAt: 'B2', States: { B2: { Type: 'Pass', Result: 'two', End: true } } }] },
    M: { Type: 'Map', ItemsPath: '$.xs', ResultPath: '$.m', Next: 'S',
      ItemProcessor: { StartAt: 'I', States: { I: { Type: 'Pass', Parameters: { 'v.$': '$' }, End: true } } } },
    S: { Type: 'Succeed' },
  },
};
const { done, events } = await run(`hist-${tag}`, flow, { n: 1 });
ok(done.status === 'SUCCEEDED', `the machine of every state ran (${done.status} ${done.error || ''})`);
const iteration = ['MapIterationStarted', 'PassStateEntered', 'PassStateExited', 'MapIterationSucceeded'];
const want = ['ExecutionStarted', 'PassStateEntered', 'PassStateExited',
  'TaskStateEntered', 'TaskScheduled', 'TaskStarted', 'TaskFailed', 'TaskScheduled', 'TaskStarted', 'TaskFailed', 'TaskStateExited',
  'ChoiceStateEntered', 'ChoiceStateExited', 'WaitStateEntered', 'WaitStateExited',
  'ParallelStateEntered', 'ParallelStateStarted', 'PassStateEntered', 'PassStateExited', 'PassStateEntered', 'PassStateExited',
  'ParallelStateSucceeded', 'ParallelStateExited',
  'MapStateEntered', 'MapStateStarted', ...iteration, ...iteration, ...iteration, 'MapStateSucceeded', 'MapStateExited',
  'SucceedStateEntered', 'SucceedStateExited', 'ExecutionSucceeded'];
const types = events.map((e) => e.type);
ok(JSON.stringify(types) === JSON.stringify(want), `the event types in order (${types.join(' ')})`);
ok(events.every((e, i) => e.id === i + 1 && e.timestamp instanceof Date), 'ids count from 1, each with a timestamp');
// previousEventId: the event before in the same execution, branch or iteration; a branch's or
// an iteration's first event follows its fan-out's Started event
const parStarted = events.find((e) => e.type === 'ParallelStateStarted').id;
const mapStarted = events.find((e) => e.type === 'MapStateStarted').id;
const expectPrev = events.map((e, i) => {
  if (e.type === 'MapIterationStarted') return mapStarted;
  if (e.type === 'PassStateEntered' && events[i - 1].type !== 'MapIterationStarted' && i > parStarted - 1 && i < mapStarted
    && events.slice(parStarted, i).every((x) => x.type !== 'ParallelStateSucceeded')) return parStarted;
  return i;
});
ok(events.every((e, i) => e.previousEventId === expectPrev[i]),
  `previousEventId chains each branch and iteration from its fan-out (${events.map((e) => e.previousEventId).join(' ')})`);

const wantMembers = {
  ExecutionStarted: 'input,inputDetails,roleArn',
  ExecutionSucceeded: 'output,outputDetails',
  TaskScheduled: 'parameters,region,resource,resourceType',
  TaskStarted: 'resource,resourceType',
  TaskFailed: 'cause,error,resource,resourceType',
  MapStateStarted: 'length',
  MapIterationStarted: 'index,name',
  MapIterationSucceeded: 'index,name',
  ParallelStateStarted: '', ParallelStateSucceeded: '', MapStateSucceeded: '',
};
const wrong = events.filter((e) => {
  if (e.type.endsWith('StateEntered')) return members(e) !== 'input,inputDetails,name' || details(e)[0] !== 'stateEnteredEventDetails';
  if (e.type.endsWith('StateExited')) return members(e) !== 'name,output,outputDetails' || details(e)[0] !== 'stateExitedEventDetails';
  return e.type in wantMembers && members(e) !== wantMembers[e.type];
});
ok(wrong.length === 0, `each event's detail members (${wrong.map((e) => `${e.id} ${e.type}: ${members(e)}`).join('; ')})`);

const entered = (n) => events.filter((e) => e.stateEnteredEventDetails?.name === n).map((e) => JSON.parse(e.stateEnteredEventDetails.input));
const exited = (n) => events.filter((e) => e.stateExitedEventDetails?.name === n).map((e) => JSON.parse(e.stateExitedEventDetails.output));
const afterP = { n: 1, xs: [10, 20, 30] };
const afterT = { ...afterP, err: { Error: 'Boom', Cause: 'why' } };
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sorted = (v) => JSON.parse(JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.entries(x).sort()) : x)));
const eq = (a, b) => same(sorted(a), sorted(b));
ok(eq(entered('P'), [{ n: 1 }]) && eq(exited('P'), [afterP]), 'a Pass state\'s input and output (after Parameters)');
ok(eq(entered('T'), [afterP]) && eq(exited('T'), [afterT]), 'a Task\'s input, and its output from the Catch (ResultPath $.err)');
ok(eq(entered('C'), [afterT]) && eq(exited('C'), [afterT]) && eq(entered('W'), [afterT]) && eq(exited('W'), [afterT]),
  'a Choice\'s and a Wait\'s input and output');
ok(eq(entered('B1'), [afterT]) && eq(exited('B1'), ['one']) && eq(exited('B2'), ['two']), 'the Parallel branches\' states');
const afterPar = { ...afterT, par: ['one', 'two'] };
ok(eq(exited('Par'), [afterPar]), 'the Parallel state\'s output (its branches\' outputs at ResultPath)');
ok(eq(entered('I'), [10, 20, 30]) && eq(exited('I'), [{ v: 10 }, { v: 20 }, { v: 30 }]), 'each Map item\'s state, input and output');
ok(same(events.filter((e) => e.type === 'MapIterationStarted').map((e) => e.mapIterationStartedEventDetails), [
  { name: 'M', index: 0 }, { name: 'M', index: 1 }, { name: 'M', index: 2 }]), 'MapIterationStarted names the Map and the item index');
ok(events.find((e) => e.type === 'MapStateStarted').mapStateStartedEventDetails.length === 3, 'MapStateStarted: length 3');
const retried = events.filter((e) => e.type === 'TaskFailed').map((e) => e.taskFailedEventDetails);
ok(retried.length === 2 && retried.every((d) => d.error === 'Boom' && d.cause === 'why'), 'the try and its retry each end TaskFailed with the error');
ok(eq(exited('S'), [{ ...afterPar, m: [{ v: 10 }, { v: 20 }, { v: 30 }] }])
  && eq(JSON.parse(events.at(-1).executionSucceededEventDetails.output), JSON.parse(done.output)), 'the Succeed state\'s output is the execution\'s');

// ---- a Fail state ------------------------------------------------------------

const failed = await run(`histfail-${tag}`, { StartAt: 'P', States: { P: { Type: 'Pass', Next: 'F' },
  F: { Type: 'Fail', Error: 'Bad', Cause: 'because' } } }, { a: 1 });
const ft = failed.events.map((e) => e.type);
ok(JSON.stringify(ft) === JSON.stringify(['ExecutionStarted', 'PassStateEntered', 'PassStateExited', 'FailStateEntered', 'ExecutionFailed']),
  `a Fail machine's events (${ft.join(' ')})`);
const ef = failed.events.at(-1).executionFailedEventDetails;
ok(ef && ef.error === 'Bad' && ef.cause === 'because' && failed.events.every((e, i) => e.previousEventId === i),
  'ExecutionFailed {error, cause}, the previousEventId chain');
ok(same(JSON.parse(failed.events[3].stateEnteredEventDetails.input), { a: 1 }), 'the Fail state\'s input');

// ---- a step the log cannot replay: no input or output rather than a wrong one --

const random = await run(`histuuid-${tag}`, { StartAt: 'U', States: {
  U: { Type: 'Pass', Parameters: { 'id.$': 'States.UUID()' }, Next: 'T' },
  T: { Type: 'Task', Resource: 'genroc:noop', End: true } } }, {});
const u = random.events.find((e) => e.type === 'PassStateEntered');
ok(random.done.status === 'SUCCEEDED' && u && u.stateEnteredEventDetails.name === 'U' && !('input' in u.stateEnteredEventDetails),
  'a state whose value the log cannot give again (States.UUID) shows no input');
ok(random.events.at(-1).executionSucceededEventDetails.output === random.done.output, 'and the execution\'s output still shows');

finish();
