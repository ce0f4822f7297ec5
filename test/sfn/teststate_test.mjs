// teststate_test.mjs — TestState: one state run alone on an input, nothing
// stored; its output, next state, status and (DEBUG) the value after each
// processing stage.  A Task, Parallel or Map runs only with a mock.
// Debian's awscli model has no TestState: the SDK's types are the oracle.
import { ok, send, outcome, finish } from './common.mjs';

const test = (state, extra = {}) => send('TestState', { definition: JSON.stringify(state), ...extra });
const data = (r, k) => (r.inspectionData && r.inspectionData[k] !== undefined ? JSON.parse(r.inspectionData[k]) : undefined);
// equal JSON, whatever the order of object members
const sorted = (v) => JSON.parse(JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.entries(x).sort()) : x)));
const same = (a, b) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

// a Pass state's stages
const pass = await test({ Type: 'Pass', InputPath: '$.in', Parameters: { 'v.$': '$.x', k: 1 }, ResultPath: '$.r', Next: 'After' },
  { input: JSON.stringify({ in: { x: 7 } }), inspectionLevel: 'DEBUG' });
ok(pass.status === 'SUCCEEDED' && pass.nextState === 'After' && same(JSON.parse(pass.output), { in: { x: 7 }, r: { k: 1, v: 7 } }),
  `a Pass state: SUCCEEDED, its next state and output (${JSON.stringify(pass)})`);
ok(same(data(pass, 'input'), { in: { x: 7 } }) && same(data(pass, 'afterInputPath'), { x: 7 })
  && same(data(pass, 'afterParameters'), { k: 1, v: 7 }) && same(data(pass, 'afterResultPath'), { in: { x: 7 }, r: { k: 1, v: 7 } }),
  'its inspectionData: input, afterInputPath, afterParameters, afterResultPath');
const info = await test({ Type: 'Pass', End: true }, { input: '{"a":1}' });
ok(info.status === 'SUCCEEDED' && info.output === '{"a":1}' && info.nextState === undefined && info.inspectionData === undefined,
  'INFO (the default): the output without inspectionData; an End state has no next state');

// a Task with a mocked result and a ResultSelector
const task = await test({ Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { 'id.$': '$.id' },
  ResultSelector: { 'body.$': '$.Payload.body' }, ResultPath: '$.res', Next: 'Done' },
{ input: '{"id":3}', inspectionLevel: 'DEBUG', mock: { result: JSON.stringify({ Payload: { body: 'hi' }, StatusCode: 200 }) } });
ok(task.status === 'SUCCEEDED' && task.nextState === 'Done' && same(JSON.parse(task.output), { id: 3, res: { body: 'hi' } }),
  `a Task with a mocked result: its output and next state (${JSON.stringify(task)})`);
ok(same(data(task, 'afterParameters'), { id: 3 }) && same(data(task, 'result'), { Payload: { body: 'hi' }, StatusCode: 200 })
  && same(data(task, 'afterResultSelector'), { body: 'hi' }) && same(data(task, 'afterResultPath'), { id: 3, res: { body: 'hi' } }),
  'its inspectionData: afterParameters, result, afterResultSelector, afterResultPath');

// a Task with a mocked error: caught, and retried
const caught = await test({ Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke',
  Catch: [{ ErrorEquals: ['Other'], Next: 'No' }, { ErrorEquals: ['States.ALL'], ResultPath: '$.err', Next: 'Handle' }], End: true },
{ input: '{"a":1}', inspectionLevel: 'DEBUG', mock: { errorOutput: { error: 'Boom', cause: 'why' } } });
ok(caught.status === 'CAUGHT_ERROR' && caught.nextState === 'Handle' && caught.error === 'Boom' && caught.cause === 'why'
  && same(JSON.parse(caught.output), { a: 1, err: { Error: 'Boom', Cause: 'why' } }),
  `a mocked error caught by Catch: CAUGHT_ERROR, the catcher's next state and output (${JSON.stringify(caught)})`);
ok(caught.inspectionData.errorDetails && caught.inspectionData.errorDetails.catchIndex === 1, 'errorDetails.catchIndex names the catcher');
const retry = { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke',
  Retry: [{ ErrorEquals: ['Boom'], MaxAttempts: 2, IntervalSeconds: 3 }], Catch: [{ ErrorEquals: ['States.ALL'], Next: 'H' }], End: true };
const retriable = await test(retry, { inspectionLevel: 'DEBUG', mock: { errorOutput: { error: 'Boom' } } });
ok(retriable.status === 'RETRIABLE' && retriable.error === 'Boom' && retriable.inspectionData.errorDetails.retryIndex === 0
  && retriable.inspectionData.errorDetails.retryBackoffIntervalSeconds === 3, `a mocked error a Retry takes: RETRIABLE (${JSON.stringify(retriable)})`);
const spent = await test(retry, { mock: { errorOutput: { error: 'Boom' } }, stateConfiguration: { retrierRetryCount: 2 } });
ok(spent.status === 'CAUGHT_ERROR' && spent.nextState === 'H', 'retrierRetryCount at MaxAttempts: the Catch takes it');
const uncaught = await test({ Type: 'Task', Resource: 'x', End: true }, { mock: { errorOutput: { error: 'Boom', cause: 'c' } } });
ok(uncaught.status === 'FAILED' && uncaught.error === 'Boom' && uncaught.cause === 'c', 'a mocked error nobody catches: FAILED');

// Choice, Fail, Wait
const choice = { Type: 'Choice', Choices: [{ Variable: '$.n', NumericGreaterThan: 5, Next: 'Big' }], Default: 'Small' };
ok((await test(choice, { input: '{"n":9}' })).nextState === 'Big' && (await test(choice, { input: '{"n":1}' })).nextState === 'Small',
  'a Choice state: the next state its rules choose');
const fail = await test({ Type: 'Fail', Error: 'E', Cause: 'c' });
ok(fail.status === 'FAILED' && fail.error === 'E' && fail.cause === 'c' && fail.output === undefined, 'a Fail state: FAILED, its error and cause');
const wait = await test({ Type: 'Wait', Seconds: 3600, Next: 'N' }, { input: '[1]' });
ok(wait.status === 'SUCCEEDED' && wait.nextState === 'N' && wait.output === '[1]', 'a Wait state does not wait');

// JSONata
const jsonata = await test({ QueryLanguage: 'JSONata', Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke',
  Arguments: { n: '{% $states.input.n + 1 %}' }, Output: '{% $states.result.v * $x %}', Assign: { y: '{% $x + 1 %}' }, End: true },
{ input: '{"n":1}', variables: '{"x":10}', inspectionLevel: 'DEBUG', mock: { result: '{"v":4}' } });
ok(jsonata.status === 'SUCCEEDED' && jsonata.output === '40' && same(data(jsonata, 'afterArguments'), { n: 2 })
  && same(data(jsonata, 'variables'), { x: 10, y: 11 }), `a JSONata Task: Arguments, Output, the variables after Assign (${JSON.stringify(jsonata)})`);

// Map and Parallel with a mock; a whole machine with stateName
const map = await test({ Type: 'Map', ItemsPath: '$.xs', ItemSelector: { 'i.$': '$$.Map.Item.Index' }, MaxConcurrency: 2,
  ItemProcessor: { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } }, End: true },
{ input: '{"xs":["a","b"]}', inspectionLevel: 'DEBUG', mock: { result: '[1,2]' } });
ok(map.status === 'SUCCEEDED' && map.output === '[1,2]' && same(data(map, 'afterItemsPath'), ['a', 'b'])
  && same(data(map, 'afterItemSelector'), [{ i: 0 }, { i: 1 }]) && map.inspectionData.maxConcurrency === 2,
  `a Map state with a mocked result: afterItemsPath, afterItemSelector, maxConcurrency (${JSON.stringify(map)})`);
const named = await send('TestState', { stateName: 'B', inspectionLevel: 'INFO', input: '{}', definition: JSON.stringify({ StartAt: 'A',
  States: { A: { Type: 'Pass', Next: 'B' }, B: { Type: 'Pass', Result: 2, Next: 'A' } } }) });
ok(named.status === 'SUCCEEDED' && named.nextState === 'A' && named.output === '2', 'stateName picks a state of a whole machine');

// refusals
ok(await outcome(test({ Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', End: true })) === 'ValidationException',
  'a Task without a mock: ValidationException (genroc calls no resource from TestState)');
ok(await outcome(test({ Type: 'Pass', End: true }, { mock: { result: '1' } })) === 'ValidationException', 'a mock for a Pass state: ValidationException');
ok(await outcome(test({ Type: 'Pass', Next: 1 })) === 'InvalidDefinition', 'a bad state: InvalidDefinition');
ok(await outcome(test({ Type: 'Pass', End: true }, { input: '{' })) === 'InvalidExecutionInput', 'input that is not JSON: InvalidExecutionInput');
ok(await outcome(test({ Type: 'Pass', End: true }, { inspectionLevel: 'LOUD' })) !== 'ok', 'an unknown inspectionLevel is refused');

finish();
