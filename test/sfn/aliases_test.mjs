// aliases_test.mjs — aliases through AWS's JavaScript SDK: each alias
// action and its errors, 1,000 StartExecution calls through a 90/10 alias
// (the counts within a binomial bound), executions listed by alias and by
// version, DeleteStateMachineVersion, DeleteStateMachine (starts refused, a
// running execution goes on), StopExecution's error and cause in
// DescribeExecution and the history.  run.sh starts the server.
import { ACCOUNT, STORE, arn, ok, send, outcome, until, finish } from './common.mjs';

const tag = `${STORE}${Date.now() % 100000}`;
const role = `arn:aws:iam::${ACCOUNT}:role/x`;
const pass = (result) => JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', Result: result, End: true } } });

// ---- alias actions --------------------------------------------------------

const name = `split-${tag}`;
const machine = arn('stateMachine', name);
await send('CreateStateMachine', { name, definition: pass('one'), roleArn: role, publish: true });
await send('UpdateStateMachine', { stateMachineArn: machine, definition: pass('two'), publish: true, versionDescription: 'second' });
const v1 = `${machine}:1`, v2 = `${machine}:2`;
const aliasArn = `${machine}:prod`;
const routing = [{ stateMachineVersionArn: v1, weight: 90 }, { stateMachineVersionArn: v2, weight: 10 }];
const made = await send('CreateStateMachineAlias', { name: 'prod', description: 'ninety ten', routingConfiguration: routing });
ok(made.stateMachineAliasArn === aliasArn && made.creationDate instanceof Date, 'CreateStateMachineAlias answers the alias ARN');
ok((await send('CreateStateMachineAlias', { name: 'prod', description: 'ninety ten', routingConfiguration: routing }))
  .stateMachineAliasArn === aliasArn, 'CreateStateMachineAlias again with the same configuration answers the alias');
ok(await outcome(send('CreateStateMachineAlias', { name: 'prod', routingConfiguration: [{ stateMachineVersionArn: v1, weight: 100 }] }))
  === 'ConflictException', 'CreateStateMachineAlias of a taken name with another routing: ConflictException');
ok(await outcome(send('CreateStateMachineAlias', { name: 'bad', routingConfiguration: [{ stateMachineVersionArn: v1, weight: 60 }] }))
  === 'ValidationException', 'weights not summing to 100: ValidationException');
ok(await outcome(send('CreateStateMachineAlias', { name: 'bad', routingConfiguration: [{ stateMachineVersionArn: `${machine}:9`, weight: 100 }] }))
  === 'ResourceNotFound', 'a version that does not exist: ResourceNotFound');
ok(await outcome(send('CreateStateMachineAlias', { name: '123', routingConfiguration: [{ stateMachineVersionArn: v1, weight: 100 }] }))
  === 'ValidationException', 'an alias name of digits only: ValidationException');
const described = await send('DescribeStateMachineAlias', { stateMachineAliasArn: aliasArn });
ok(described.name === 'prod' && described.description === 'ninety ten' && described.routingConfiguration.length === 2
  && described.routingConfiguration[0].stateMachineVersionArn === v1 && described.routingConfiguration[0].weight === 90,
  'DescribeStateMachineAlias answers its routing and description');
ok(await outcome(send('DescribeStateMachineAlias', { stateMachineAliasArn: `${machine}:none` })) === 'ResourceNotFound',
  'DescribeStateMachineAlias of no alias: ResourceNotFound');
await send('CreateStateMachineAlias', { name: 'all-one', routingConfiguration: [{ stateMachineVersionArn: v1, weight: 100 }] });
const page1 = await send('ListStateMachineAliases', { stateMachineArn: machine, maxResults: 1 });
const page2 = await send('ListStateMachineAliases', { stateMachineArn: machine, maxResults: 1, nextToken: page1.nextToken });
ok(page1.stateMachineAliases[0].stateMachineAliasArn === `${machine}:all-one`
  && page2.stateMachineAliases[0].stateMachineAliasArn === aliasArn && !page2.nextToken,
  'ListStateMachineAliases pages by name');

// 100/0: always version 1, DescribeExecution names the alias and the version
for (let k = 0; k < 5; k++) {
  const e = await send('StartExecution', { stateMachineArn: `${machine}:all-one` });
  const d = await until(async () => { const x = await send('DescribeExecution', { executionArn: e.executionArn }); return x.status !== 'RUNNING' && x; });
  if (k === 0) ok(d.stateMachineAliasArn === `${machine}:all-one` && d.stateMachineVersionArn === v1,
    'DescribeExecution names the alias and the version it ran');
  if (d.output !== '"one"') ok(false, `a 100/0 alias ran ${d.output}`);
}
const byVersion = await send('StartExecution', { stateMachineArn: v2, name: 'by-version' });
const dv = await send('DescribeExecution', { executionArn: byVersion.executionArn });
ok(dv.stateMachineVersionArn === v2 && !dv.stateMachineAliasArn && dv.output === '"two"',
  'a start by a version ARN runs it and DescribeExecution names it');

// 90/10 over 1,000 starts: version 1 within 5 standard deviations of 900
const t0 = Date.now();
const arns = [];
for (let k = 0; k < 1000; k += 16) {
  const batch = await Promise.all(Array.from({ length: Math.min(16, 1000 - k) }, () => send('StartExecution', { stateMachineArn: aliasArn })));
  arns.push(...batch.map((b) => b.executionArn));
}
const startMs = Date.now() - t0;
let first = 0, listed = 0, token;
do {
  const page = await send('ListExecutions', { stateMachineArn: aliasArn, maxResults: 1000, nextToken: token });
  listed += page.executions.length;
  token = page.nextToken;
} while (token);
for (let token1 = undefined, more = true; more;) {
  const page = await send('ListExecutions', { stateMachineArn: v1, maxResults: 1000, nextToken: token1 });
  first += page.executions.length;
  token1 = page.nextToken;
  more = !!token1;
}
first -= 5;	// the five through the 100/0 alias ran version 1 too
const sd = Math.sqrt(1000 * 0.9 * 0.1);
ok(listed === 1000, `ListExecutions by the alias ARN lists the 1,000 started through it (${listed})`);
ok(Math.abs(first - 900) <= 5 * sd, `1,000 starts through a 90/10 alias: ${first} ran version 1 (853..947)`);
console.log(`# ${STORE}: 1,000 StartExecution calls through the alias in ${startMs} ms`);

const upd = await send('UpdateStateMachineAlias', { stateMachineAliasArn: aliasArn, routingConfiguration: [{ stateMachineVersionArn: v2, weight: 100 }] });
const after = await send('DescribeStateMachineAlias', { stateMachineAliasArn: aliasArn });
ok(upd.updateDate instanceof Date && after.routingConfiguration.length === 1 && after.description === 'ninety ten',
  'UpdateStateMachineAlias replaces the routing and keeps the description');
ok(await outcome(send('DeleteStateMachineVersion', { stateMachineVersionArn: v2 })) === 'ConflictException',
  'DeleteStateMachineVersion of a version an alias routes to: ConflictException');
await send('DeleteStateMachineAlias', { stateMachineAliasArn: `${machine}:all-one` });
await send('DeleteStateMachineVersion', { stateMachineVersionArn: v1 });
const versions = await send('ListStateMachineVersions', { stateMachineArn: machine });
ok(versions.stateMachineVersions.length === 1 && versions.stateMachineVersions[0].stateMachineVersionArn === v2,
  'DeleteStateMachineVersion: the version is no longer listed');
ok(await outcome(send('StartExecution', { stateMachineArn: v1 })) === 'StateMachineDoesNotExist',
  'a start by a deleted version: StateMachineDoesNotExist');
ok(await outcome(send('DeleteStateMachineAlias', { stateMachineAliasArn: `${machine}:all-one` })) === 'ResourceNotFound',
  'DeleteStateMachineAlias of no alias: ResourceNotFound');

// ---- DeleteStateMachine ---------------------------------------------------

const waitName = `deleted-${tag}`;
const waitMachine = arn('stateMachine', waitName);
await send('CreateStateMachine', { name: waitName, roleArn: role,
  definition: JSON.stringify({ StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 1, End: true } } }) });
const running = await send('StartExecution', { stateMachineArn: waitMachine, name: 'goes-on' });
await send('DeleteStateMachine', { stateMachineArn: waitMachine });
ok(await outcome(send('StartExecution', { stateMachineArn: waitMachine })) === 'StateMachineDoesNotExist',
  'a start of a deleted state machine: StateMachineDoesNotExist');
ok(await outcome(send('DescribeStateMachine', { stateMachineArn: waitMachine })) === 'StateMachineDoesNotExist',
  'DescribeStateMachine of a deleted state machine: StateMachineDoesNotExist');
const machines = await send('ListStateMachines', {});
ok(!machines.stateMachines.some((m) => m.name === waitName), 'ListStateMachines leaves the deleted state machine out');
const ended = await until(async () => { const d = await send('DescribeExecution', { executionArn: running.executionArn }); return d.status !== 'RUNNING' && d; });
ok(ended.status === 'SUCCEEDED', 'the execution running when its state machine was deleted goes on to its end');
ok((await outcome(send('DeleteStateMachine', { stateMachineArn: arn('stateMachine', `never-${tag}`) }))) === 'ok',
  'DeleteStateMachine of no state machine succeeds, as AWS');
await send('CreateStateMachine', { name: waitName, roleArn: role, definition: pass('again') });
ok((await send('DescribeStateMachine', { stateMachineArn: waitMachine })).status === 'ACTIVE',
  'CreateStateMachine makes a deleted name again');

// ---- StopExecution's error and cause ----------------------------------------

const holdName = `hold-${tag}`;
await send('CreateStateMachine', { name: holdName, roleArn: role,
  definition: JSON.stringify({ StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 3600, End: true } } }) });
const held = await send('StartExecution', { stateMachineArn: arn('stateMachine', holdName) });
await send('StopExecution', { executionArn: held.executionArn, error: 'Ops.Stopped', cause: 'stopped by the test' });
const stopped = await send('DescribeExecution', { executionArn: held.executionArn });
ok(stopped.status === 'ABORTED' && stopped.error === 'Ops.Stopped' && stopped.cause === 'stopped by the test',
  'StopExecution with an error and a cause: DescribeExecution shows them');
const last = (await send('GetExecutionHistory', { executionArn: held.executionArn, reverseOrder: true })).events[0];
ok(last.type === 'ExecutionAborted' && last.executionAbortedEventDetails.error === 'Ops.Stopped'
  && last.executionAbortedEventDetails.cause === 'stopped by the test', 'ExecutionAborted carries the error and the cause');
const other = await send('StartExecution', { stateMachineArn: arn('stateMachine', holdName) });
ok(await outcome(send('StopExecution', { executionArn: other.executionArn, error: 'e'.repeat(257) })) === 'ValidationException',
  'an error of 257 characters: ValidationException');

finish();
