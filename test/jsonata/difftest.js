// difftest.js — the differential test of genroc's JSONata evaluator (core/)
// against the reference implementation (the `jsonata` npm package pinned in
// package.json, used here as a test oracle and nowhere else).
//
//   node difftest.js CLI [--seed N] [--count N] [--show N]
//
// CLI is the jsonata_cli binary (genroc's evaluator on a batch).  The cases
// are the hand-written corpus (corpus.json) plus COUNT expressions from a
// small seeded grammar; each runs on the same input with both.  Answers
// agree when both give the same JSON value (object key order aside), both
// give undefined, or both fail with the same error code.  A disagreement
// that one of the EXPLAINED rules below covers is counted apart; any other
// fails the test (exit 1).  Prints the agreement rate.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const jsonata = require('jsonata');

// One clock for both: the reference reads $now() / $millis() from `new
// Date()` at each evaluation, genroc from the caller (jsonata_cli's now_ms).
const NOW = 1700000000123; // 2023-11-14T22:13:20.123Z
const RealDate = Date;
global.Date = class extends RealDate {
	constructor(...a) {
		if (a.length === 0) super(NOW);
		else super(...a);
	}
	static now() { return NOW; }
};

const args = process.argv.slice(2);
const cli = args[0];
function opt(name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? Number(args[i + 1]) : def;
}
const seed = opt('--seed', 15);
const count = opt('--count', 3000);
const show = opt('--show', 20);

// ------------------------------------------------------------------ inputs

const INPUTS = [
	{
		a: 1, b: [1, 2, 3], s: 'Hello World', n: null, t: true, f: false, x: 2.5,
		c: { d: 'x', e: [{ f: 1, g: 'p' }, { f: 2, g: 'q' }, { f: 3, g: 'p' }] },
		arr: [[1, 2], [3], []], nums: [3, 1, 2, 10], strs: ['b', 'a', 'c'],
		objs: [{ k: 'x', v: 1 }, { k: 'y', v: 2 }, { k: 'x', v: 3 }],
		empty: [], eo: {}, csv: 'a,b,,c', pad: '  a  b ', url: 'a b&c=d/é',
		deep: { l1: { l2: { l3: [{ l4: 'v' }] } } },
	},
	[{ a: 1, b: 'x' }, { a: 2, b: 'y' }, { a: 3 }],
	{ Account: { Order: [
		{ OrderID: 'o1', Product: [{ Name: 'Hat', Price: 34.45, Quantity: 2 }, { Name: 'Cap', Price: 21.67, Quantity: 1 }] },
		{ OrderID: 'o2', Product: [{ Name: 'Hat', Price: 34.45, Quantity: 4 }, { Name: 'Scarf', Price: 12.5, Quantity: 1 }] },
	] } },
	'just a string',
	42,
];

// ------------------------------------------------------------------ generator

function mulberry32(a) {
	return function () {
		a |= 0; a = (a + 0x6D2B79F5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
let rnd = mulberry32(seed);
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const chance = (p) => rnd() < p;

const PATHS = ['a', 'b', 's', 'n', 't', 'f', 'x', 'c', 'c.d', 'c.e', 'c.e.f', 'c.e.g', 'arr', 'nums',
	'strs', 'objs', 'objs.k', 'objs.v', 'empty', 'eo', 'csv', 'pad', 'deep.l1.l2.l3.l4', 'missing',
	'b[0]', 'b[-1]', 'nums[1]', 'objs[v>1]', 'objs[k="x"].v', 'c.e[g="p"].f', '*', '**.f', 'arr[0]',
	'Account.Order.Product.Price', 'Account.Order.OrderID', 'Account.Order[0].Product.Name',
	'$', '$$', '$.a', 'b[]', 'objs.v[]', 'c.e[0]', 'c.e[-1].g', 'nums[$ > 2]', 'arr.$', '`a`'];
const NUMS = () => pick(['0', '1', '2', '3', '-1', '0.5', '2.5', '10', '100', '1e3', '-2.5', '7']);
const STRS = () => pick(['"a"', '"b"', '""', '"Hello"', "'x'", '"a,b"', '"p"', '"x"', '" a "', '"10"', '"é"']);

function num(d) {
	if (d <= 0 || chance(0.3)) return chance(0.5) ? NUMS() : pick(['a', 'x', 'b[0]', 'nums[0]', '$count(b)', 'objs[0].v']);
	return pick([
		() => `${num(d - 1)} ${pick(['+', '-', '*', '/', '%'])} ${num(d - 1)}`,
		() => `$${pick(['sum', 'max', 'min', 'average', 'count'])}(${arr(d - 1)})`,
		() => `$${pick(['abs', 'floor', 'ceil', 'round', 'sqrt'])}(${num(d - 1)})`,
		() => `$round(${num(d - 1)}, ${pick(['1', '2', '-1'])})`,
		() => `$power(${num(d - 1)}, ${pick(['2', '0.5', '-1', '3'])})`,
		() => `$length(${str(d - 1)})`,
		() => `$number(${pick(['"12"', '"1.5e2"', '"0x1f"', 'true', '"abc"', 'a'])})`,
		() => `-${num(d - 1)}`,
		() => `(${num(d - 1)})`,
		() => `$reduce(${arr(d - 1)}, function($p, $c){ $p + $c })`,
	])();
}

function str(d) {
	if (d <= 0 || chance(0.3)) return chance(0.5) ? STRS() : pick(['s', 'c.d', 'csv', 'pad', 'url', 'strs[0]', 'objs[0].k']);
	return pick([
		() => `${str(d - 1)} & ${pick([str(d - 1), num(d - 1)])}`,
		() => `$string(${any(d - 1)})`,
		() => `$substring(${str(d - 1)}, ${pick(['0', '1', '-3', '2'])}${chance(0.5) ? ', ' + pick(['1', '2', '0', '5']) : ''})`,
		() => `$substringBefore(${str(d - 1)}, ${STRS()})`,
		() => `$substringAfter(${str(d - 1)}, ${STRS()})`,
		() => `$${pick(['uppercase', 'lowercase', 'trim'])}(${str(d - 1)})`,
		() => `$pad(${str(d - 1)}, ${pick(['5', '-5', '2', '8'])}${chance(0.5) ? ', "#"' : ''})`,
		() => `$join(${strarr(d - 1)}${chance(0.5) ? ', ", "' : ''})`,
		() => `$replace(${str(d - 1)}, ${pick(['"a"', '" "', '/[aeiou]/', '/(l+)/', '/o/i'])}, ${pick(['"_"', '"[$1]"', '"$0$0"', '""'])}${chance(0.3) ? ', 1' : ''})`,
		() => `$base64encode(${str(d - 1)})`,
		() => `$base64decode($base64encode(${str(d - 1)}))`,
		() => `$encodeUrlComponent(${str(d - 1)})`,
		() => `$encodeUrl(${str(d - 1)})`,
		() => `$decodeUrlComponent(${pick(['"a%20b"', '"%E2%82%AC"', '"%zz"', 's'])})`,
		() => `$formatBase(${num(d - 1)}, ${pick(['2', '16', '36', '1'])})`,
		() => `$type(${any(d - 1)})`,
		() => `${bool(d - 1)} ? ${str(d - 1)} : ${str(d - 1)}`,
	])();
}

function bool(d) {
	if (d <= 0 || chance(0.25)) return pick(['true', 'false', 't', 'f', 'n', 'missing']);
	return pick([
		() => `${num(d - 1)} ${pick(['<', '<=', '>', '>=', '=', '!='])} ${num(d - 1)}`,
		() => `${str(d - 1)} ${pick(['<', '=', '!=', '>='])} ${str(d - 1)}`,
		() => `${bool(d - 1)} ${pick(['and', 'or'])} ${bool(d - 1)}`,
		() => `$not(${any(d - 1)})`,
		() => `$boolean(${any(d - 1)})`,
		() => `$exists(${any(d - 1)})`,
		() => `$contains(${str(d - 1)}, ${pick([STRS(), '/l+/', '/^H/'])})`,
		() => `${num(d - 1)} in ${arr(d - 1)}`,
		() => `${any(d - 1)} = ${any(d - 1)}`,
	])();
}

function strarr(d) {
	return pick(['strs', '["x", "y"]', 'objs.k', '$split(csv, ",")', '$keys(c)', '[]', '$split(s, "")']);
}

function arr(d) {
	if (d <= 0 || chance(0.3)) return pick(['b', 'nums', 'objs.v', '[1, 2, 3]', '[]', 'c.e.f', '[0.5, 1.5]', '1..4', 'empty']);
	return pick([
		() => `[${num(d - 1)}, ${num(d - 1)}]`,
		() => `[${num(d - 1)}..${pick(['3', '5', '0'])}]`,
		() => `$map(${arr(d - 1)}, function($v, $i){ $v ${pick(['+', '*', '-'])} $i })`,
		() => `$filter(${arr(d - 1)}, function($v){ $v ${pick(['>', '<', '!='])} ${NUMS()} })`,
		() => `$sort(${arr(d - 1)})`,
		() => `$sort(${arr(d - 1)}, function($l, $r){ $l < $r })`,
		() => `$reverse(${arr(d - 1)})`,
		() => `$distinct(${arr(d - 1)})`,
		() => `$append(${arr(d - 1)}, ${any(d - 1)})`,
		() => `${arr(d - 1)}[${pick(['0', '-1', '$ > 1', '[0, 1]', '1'])}]`,
		() => `nums^(${pick(['$', '>$', '<$'])})`,
		() => `$zip(${arr(d - 1)}, ${arr(d - 1)})`,
		() => `$split(${str(d - 1)}, ${pick(['","', '" "', '/[ ,]/', '""'])}${chance(0.3) ? ', 2' : ''})`,
		() => `$match(${str(d - 1)}, ${pick(['/l/', '/[a-z]+/i', '/(o)(x)?/'])})`,
		() => `$partition(${arr(d - 1)}, ${pick(['1', '2', '3'])})`,
		() => `$range(${pick(['0', '1', '5'])}, ${pick(['4', '10', '0'])}, ${pick(['1', '2', '-1'])})`,
	])();
}

function obj(d) {
	if (d <= 0 || chance(0.3)) return pick(['c', 'eo', 'objs[0]', '{"p": 1}', 'deep']);
	return pick([
		() => `{"k": ${any(d - 1)}, "m": ${any(d - 1)}}`,
		() => `objs{k: $sum(v)}`,
		() => `objs{k: v}`,
		() => `objs{k: $count(v), "all": $sum(v)}`,
		() => `$merge([${obj(d - 1)}, ${obj(d - 1)}])`,
		() => `$sift(${obj(d - 1)}, function($v){ $exists($v) })`,
		() => `$spread(${obj(d - 1)})`,
		() => `$lookup(${obj(d - 1)}, "k")`,
		() => `$each(${obj(d - 1)}, function($v, $k){ $k & "=" & $string($v) })`,
		() => `$keys(${obj(d - 1)})`,
		() => `Account.Order.Product{Name: $sum(Price)}`,
		() => `$parse(${pick(['"{\\"a\\": [1, 2]}"', '"[1"', '"null"', '"3"'])})`,
	])();
}

function any(d) {
	return pick([
		() => num(d), () => str(d), () => bool(d), () => arr(d), () => obj(d),
		() => pick(PATHS),
		() => `(${'$' + pick(['v', 'w'])} := ${any(d - 1)}; ${'$' + pick(['v', 'w'])})`,
		() => `${any(d - 1)} ? ${any(d - 1)} : ${any(d - 1)}`,
		() => `${any(d - 1)} ?: ${any(d - 1)}`,
		() => `${any(d - 1)} ?? ${any(d - 1)}`,
		() => `${any(d - 1)} ~> $string()`,
		() => `${pick(PATHS)}.${pick(['a', 'k', 'v', 'f', '$string()', '$type($)', '(a + 1)', '[0]'])}`,
		() => `${arr(d - 1)}.($ * 2)`,
		() => `${pick(PATHS)}[${any(d - 1)}]`,
		() => `$single(${arr(d - 1)}${chance(0.5) ? ', function($v){ $v = 1 }' : ''})`,
		() => `(function($x){ $x + 1 })(${num(d - 1)})`,
		() => `$count(${any(d - 1)})`,
		() => `${arr(d - 1)} & ${any(d - 1)}`,
		() => `${any(d - 1)} + ${any(d - 1)}`,
	])();
}

function generate(n) {
	const out = [];
	for (let i = 0; i < n; i++) {
		const expr = any(pick([1, 2, 2, 3, 3, 4]));
		const input = chance(0.85) ? INPUTS[0] : pick(INPUTS.slice(1));
		out.push({ expr, input, source: 'generated' });
	}
	return out;
}

// ------------------------------------------------------------------ what may differ, and why

// Each rule: a name, why, and a test on (case, ours, theirs).
const EXPLAINED = [
	{
		name: 'limit',
		why: 'genroc stops at its own limits (core/limits.def: L0001) where the reference runs on or overflows its stack',
		test: (c, o, t) => o.error === 'L0001',
	},
	{
		name: 'non-finite',
		why: 'arithmetic past a double (1/0, 1e308*10): the reference yields Infinity (null in JSON); genroc fails with D1001 since no JSON holds it',
		test: (c, o, t) => o.error === 'D1001',
	},
	{
		name: 'random',
		why: '$random, $uuid, $shuffle: different by design',
		test: (c) => /\$(random|uuid|shuffle)\b/.test(c.expr),
	},
	{
		name: 'aws-function',
		why: "AWS's additions ($partition, $range, $hash, $random(seed), $uuid, $parse) are not in the reference",
		test: (c, o, t) => /\$(partition|range|hash|parse)\s*\(/.test(c.expr) && (t.error === 'T1006' || t.error === 'T0410'),
	},
	{
		name: 'iana-zone',
		why: "a time zone by IANA name ('Europe/Paris'): genroc reads its offset at that instant from the system's tzdata (an unknown name is D3137); the reference reads only ±HHMM and answers NaN fields",
		test: (c, o, t) => /\$(fromMillis|now)\(.*'[A-Z][A-Za-z_]+\/[A-Za-z_\/]+'/.test(c.expr) &&
			((typeof t.value === 'string' && /NaN/.test(t.value)) || (Array.isArray(t.value) && /NaN/.test(JSON.stringify(t.value)))),
	},
	{
		name: 'function-result',
		why: 'a function as the result: the reference cannot render it (a circular structure); genroc answers undefined, as JSON has no functions',
		test: (c, o, t) => (t.error === 'RangeError' && /circular/.test(t.message || '')) ||
			(o.undefined && t.value && t.value._jsonata_function),
	},
	{
		name: 'eval',
		why: '$eval is not offered (AWS Step Functions refuses it; $parse reads JSON text)',
		test: (c, o, t) => /\$eval\s*\(/.test(c.expr) && o.error === 'T1006',
	},
	{
		name: 'undefined-in-sequence',
		why: 'the reference keeps an undefined in a sequence when a predicate follows a step that found nothing for some items (it shows as null); genroc drops it',
		test: (c, o, t) => Array.isArray(t.value) && t.value.includes(null) &&
			JSON.stringify(canon(t.value.filter((x) => x !== null))) ===
			JSON.stringify(canon((Array.isArray(o.value) ? o.value : [o.value]).filter((x) => x !== null))),
	},
	{
		name: 'focus-index',
		why: 'the focus (@) and index (#) bindings are not implemented: genroc refuses them at compile time (S0218)',
		test: (c, o, t) => o.error === 'S0218',
	},
	{
		name: 'case-mapping',
		why: '$uppercase / $lowercase map ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic; JavaScript maps every script',
		test: (c) => /\$(upper|lower)case/.test(c.expr) && /[^\x00-\u017f\u0370-\u045f]/.test(JSON.stringify(c)),
	},
	{
		name: 'regex-dialect',
		why: 'std::regex (ECMAScript grammar, bytes not UTF-16 units) differs from JavaScript regexes on non-ASCII text',
		test: (c) => /\/[^/]*\/[im]*/.test(c.expr) && /[^\x00-\x7f]/.test(JSON.stringify(c.input)),
	},
];

// ------------------------------------------------------------------ running both

function canon(v) {
	if (Array.isArray(v)) return v.map(canon);
	if (v && typeof v === 'object') {
		const o = {};
		for (const k of Object.keys(v).sort()) o[k] = canon(v[k]);
		return o;
	}
	return v;
}

async function reference(c) {
	try {
		const expr = jsonata(c.expr);
		// the reference has no step limit of its own: stop it where genroc's
		// jsonata_steps would (a generated expression can run for hours)
		let steps = 0;
		expr.assign('__evaluate_entry', () => {
			if (++steps > 5000000) throw { code: 'STEPS', message: 'the reference ran past 5000000 steps' };
		});
		const bindings = c.bindings || {};
		const r = await expr.evaluate(c.input, bindings);
		if (r === undefined) return { undefined: true };
		// what the result is as JSON (functions dropped, Infinity null)
		const j = JSON.stringify(r);
		if (j === undefined) return { undefined: true };
		return { value: JSON.parse(j) };
	} catch (e) {
		return { error: e.code || 'RangeError', message: e.message };
	}
}

function same(o, t) {
	if (o.error || t.error) return o.error === t.error;
	if (o.undefined || t.undefined) return !!o.undefined === !!t.undefined;
	return JSON.stringify(canon(o.value)) === JSON.stringify(canon(t.value));
}

async function main() {
	const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, 'corpus.json'), 'utf8'));
	const cases = corpus.map((c) => ({
		expr: c.expr,
		input: c.input === undefined ? INPUTS[0] : c.input,
		source: 'corpus',
	}));
	cases.push(...generate(count));
	// genroc keeps JSON objects with their keys sorted (nlohmann::json;
	// PostgreSQL's jsonb orders them too), so the inputs' keys are sorted
	// for both: the order of *, $keys, $each over an input is then the same.
	for (const c of cases) c.input = canon(c.input);
	const tmp = path.join(os.tmpdir(), `jsonata-diff-${process.pid}.json`);
	fs.writeFileSync(tmp, JSON.stringify(cases.map(({ expr, input }) => ({ expr, input, now_ms: NOW }))));
	if (process.env.KEEP) console.log(tmp);
	const ours = JSON.parse(execFileSync(cli, [tmp], { maxBuffer: 1 << 28 }).toString());
	if (!process.env.KEEP) fs.unlinkSync(tmp);
	let agree = 0;
	const explained = {};
	const unexplained = [];
	for (let i = 0; i < cases.length; i++) {
		const c = cases[i];
		const t = await reference(c);
		const o = ours[i];
		if (same(o, t)) {
			agree++;
			continue;
		}
		const rule = EXPLAINED.find((r) => r.test(c, o, t));
		if (rule) {
			explained[rule.name] = (explained[rule.name] || 0) + 1;
			continue;
		}
		unexplained.push({ expr: c.expr, source: c.source, ours: o, reference: t,
			input: c.input === INPUTS[0] ? 'INPUTS[0]' : c.input });
	}
	const total = cases.length;
	console.log(`jsonata differential test: ${total} cases (${corpus.length} hand-written, ${count} generated, seed ${seed})`);
	console.log(`  agree: ${agree} (${((100 * agree) / total).toFixed(2)}%)`);
	for (const r of EXPLAINED)
		if (explained[r.name]) console.log(`  explained ${r.name}: ${explained[r.name]} — ${r.why}`);
	console.log(`  unexplained: ${unexplained.length}`);
	for (const u of unexplained.slice(0, show)) console.log('  ' + JSON.stringify(u));
	process.exit(unexplained.length ? 1 : 0);
}

main().catch((e) => {
	console.error(e);
	process.exit(2);
});
