// redrive_test.mjs — RedriveExecution through AWS's JavaScript SDK: a Map of
// ten items, each an activity task this process works as AWS's documentation
// writes a worker; two items fail the first time, the redrive reruns only
// those two (deliveries counted per item), and the Map's output is all ten in
// order.  DescribeExecution's redrive members, ExecutionRedriven in the
// history, ExecutionNotRedrivable and ExecutionDoesNotExist.
import { ACCOUNT, STORE, arn, ok, send, outcome, until, finish } from './common.mjs';

const tag = `${STORE}${Date.now() % 100000}`;
const role = `arn:aws:iam::${ACCOUNT}:role/x`;
const act = await send('CreateActivity', { name: `redrive-${tag}` });
const name = `redrive-${tag}`;
await send('CreateStateMachine', { name, roleArn: role, definition: JSON.stringify({
  StartAt: 'Each',
  States: { Each: { Type: 'Map', ItemsPath: '$.items', End: true,
    ItemProcessor: { StartAt: 'Work', States: { Work: { Type: 'Task', Resource: act.activityArn, End: true } } } } },
}) });
const items = Array.from({ length: 10 }, (_, i) => ({ i }));
const exec = await send('StartExecution', { stateMachineArn: arn('stateMachine', name), input: JSON.stringify({ items }) });
const describe = () => send('DescribeExecution', { executionArn: exec.executionArn });

const deliveries = new Map();
const poll = async () => {
  const task = await send('GetActivityTask', { activityArn: act.activityArn, workerName: 'redrive-worker' });
  if (!task.taskToken) return null;
  const { i } = JSON.parse(task.input);
  deliveries.set(i, (deliveries.get(i) || 0) + 1);
  return { i, token: task.taskToken };
};

// The first run: every item delivered; eight succeed, then item 3 fails the
// Map (which stops item 7, still running: its failure comes too late)
const first = [];
while (first.length < 10) { const t = await poll(); if (t) first.push(t); }
for (const t of first.filter((x) => x.i !== 3 && x.i !== 7))
  await send('SendTaskSuccess', { taskToken: t.token, output: JSON.stringify({ r: t.i * 10 }) });
await send('SendTaskFailure', { taskToken: first.find((x) => x.i === 3).token, error: 'Item.Failed', cause: 'first run' });
await outcome(send('SendTaskFailure', { taskToken: first.find((x) => x.i === 7).token, error: 'Item.Failed', cause: 'first run' }));
const failed = await until(async () => { const d = await describe(); return d.status === 'FAILED' && d; });
ok(failed && failed.redriveStatus === 'REDRIVABLE' && failed.redriveCount === 0,
  `a failed execution is REDRIVABLE, redriven 0 times (${failed && failed.redriveStatus} ${failed && failed.redriveCount})`);

const redriven = await send('RedriveExecution', { executionArn: exec.executionArn, clientToken: `req-${tag}` });
ok(redriven.redriveDate instanceof Date, 'RedriveExecution answers the redrive date');
const repeated = await send('RedriveExecution', { executionArn: exec.executionArn, clientToken: `req-${tag}` });
ok(repeated.redriveDate instanceof Date && repeated.redriveDate.getTime() === redriven.redriveDate.getTime(),
  'the same clientToken again (a retried request): the same answer, nothing redriven twice');
const again = [];
while (again.length < 2) { const t = await poll(); if (t) again.push(t); }
for (const t of again) await send('SendTaskSuccess', { taskToken: t.token, output: JSON.stringify({ r: t.i * 10 }) });
const done = await until(async () => { const d = await describe(); return d.status !== 'RUNNING' && d; });
ok(again.map((t) => t.i).sort().join() === '3,7', `the redrive delivers only items 3 and 7 (${again.map((t) => t.i).join()})`);
ok([...deliveries].every(([i, n]) => n === (i === 3 || i === 7 ? 2 : 1)) && deliveries.size === 10,
  `each other item was delivered once (${[...deliveries].sort((a, b) => a[0] - b[0]).map(([i, n]) => `${i}:${n}`).join(' ')})`);
ok(done.status === 'SUCCEEDED' && JSON.stringify(JSON.parse(done.output)) === JSON.stringify(items.map(({ i }) => ({ r: i * 10 }))),
  `the Map's output is all ten in order (${done.status} ${done.output})`);
ok(done.redriveCount === 1 && done.redriveDate instanceof Date && done.redriveStatus === 'NOT_REDRIVABLE',
  `DescribeExecution: redriveCount 1, a redriveDate, NOT_REDRIVABLE once succeeded (${done.redriveCount} ${done.redriveStatus})`);
const history = (await send('GetExecutionHistory', { executionArn: exec.executionArn })).events;
const event = history.find((e) => e.type === 'ExecutionRedriven');
ok(event && event.executionRedrivenEventDetails.redriveCount === 1
  && history.indexOf(event) > history.findIndex((e) => e.type === 'ExecutionFailed')
  && history[history.length - 1].type === 'ExecutionSucceeded',
  `the history: ExecutionFailed, ExecutionRedriven {redriveCount: 1}, ... ExecutionSucceeded (${history.map((e) => e.type).join(' ')})`);

ok(await outcome(send('RedriveExecution', { executionArn: exec.executionArn })) === 'ExecutionNotRedrivable',
  'RedriveExecution of a succeeded execution: ExecutionNotRedrivable');
ok(await outcome(send('RedriveExecution', { executionArn: `${exec.executionArn}x` })) === 'ExecutionDoesNotExist',
  'RedriveExecution of an unknown execution: ExecutionDoesNotExist');
await send('DeleteActivity', { activityArn: act.activityArn });

finish();
