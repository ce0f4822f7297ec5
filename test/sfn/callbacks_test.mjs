// callbacks_test.mjs — a .waitForTaskToken round trip through AWS's
// JavaScript SDK: the task (genroc:noop, which the server's worker runs and
// which returns at once) carries $$.Task.Token in its input; the test reads
// it from the history's TaskScheduled parameters, as a Step Functions user
// reads it from the task's input, and answers with SendTaskSuccess or
// SendTaskFailure.  A token is used once.
import { ACCOUNT, STORE, arn, ok, send, outcome, until, finish } from './common.mjs';

const tag = `${STORE}${Date.now() % 100000}`;
const role = `arn:aws:iam::${ACCOUNT}:role/x`;
const name = `callback-${tag}`;
await send('CreateStateMachine', { name, roleArn: role, definition: JSON.stringify({
  StartAt: 'Ask',
  States: {
    Ask: { Type: 'Task', Resource: 'genroc:noop.waitForTaskToken', HeartbeatSeconds: 600,
      Parameters: { 'who.$': '$.who', 'token.$': '$$.Task.Token' }, ResultPath: '$.answer', End: true },
  },
}) });

// The token the task was given, once the handler has returned and the
// execution waits for it (TaskSubmitted).
async function tokenOf(executionArn) {
  return until(async () => {
    const { events } = await send('GetExecutionHistory', { executionArn });
    if (!events.some((e) => e.type === 'TaskSubmitted')) return false;
    const scheduled = events.find((e) => e.type === 'TaskScheduled');
    return JSON.parse(scheduled.taskScheduledEventDetails.parameters).token;
  });
}
const status = (executionArn) => until(async () => {
  const d = await send('DescribeExecution', { executionArn });
  return d.status !== 'RUNNING' && d;
});

const yes = await send('StartExecution', { stateMachineArn: arn('stateMachine', name), input: '{"who":"ada"}' });
const token = await tokenOf(yes.executionArn);
ok(typeof token === 'string' && token.length >= 32, 'the task input carries $$.Task.Token');
ok((await send('DescribeExecution', { executionArn: yes.executionArn })).status === 'RUNNING',
  'the execution waits for the token after its handler returned');
await send('SendTaskHeartbeat', { taskToken: token });
await send('SendTaskSuccess', { taskToken: token, output: '{"ok":true}' });
const done = await status(yes.executionArn);
const out = JSON.parse(done.output || 'null');
ok(done.status === 'SUCCEEDED' && out.who === 'ada' && out.answer.ok === true && Object.keys(out).length === 2,
  `SendTaskSuccess: the output through ResultPath (${done.output})`);
ok(await outcome(send('SendTaskSuccess', { taskToken: token, output: '{}' })) === 'TaskTimedOut',
  'a callback token used twice: TaskTimedOut');
const types = (await send('GetExecutionHistory', { executionArn: yes.executionArn })).events.map((e) => e.type);
ok(['TaskScheduled', 'TaskStarted', 'TaskSubmitted', 'TaskSucceeded'].every((t) => types.includes(t)),
  `the callback's history (${types.join(' ')})`);

const no = await send('StartExecution', { stateMachineArn: arn('stateMachine', name), input: '{"who":"bob"}' });
await send('SendTaskFailure', { taskToken: await tokenOf(no.executionArn), error: 'Refused', cause: 'bob said no' });
const failed = await status(no.executionArn);
ok(failed.status === 'FAILED' && failed.error === 'Refused' && failed.cause === 'bob said no',
  'SendTaskFailure: the execution fails with its error and cause');

finish();
