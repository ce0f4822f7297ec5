// asl_compile_test.cpp — compile(): every validation rule, with the JSON
// path the RC001 message must name.

#include "helpers.hpp"

using namespace genroc;
using namespace genroc::test;

namespace {

struct Case {
	const char *definition;
	const char *message;  // the full RC001 message
};

void expect_refused(const Case &c) {
	EXPECT_EQ(compile_error(std::string(c.definition)), c.message) << c.definition;
}

// A one-state machine "A" whose state body is `body`.
std::string one(const std::string &body) {
	return R"({"StartAt":"A","States":{"A":)" + body + "}}";
}

}  // namespace

TEST(Compile, AcceptsAFullDefinition) {
	const char *def = R"j({"Comment":"all","Version":"1.0","TimeoutSeconds":3600,"StartAt":"P",
	  "States":{
	    "P":{"Type":"Pass","Comment":"c","InputPath":"$.a","Parameters":{"x.$":"$.b",
	         "f.$":"States.Format('{} {}', $.a, 'b')"},"ResultPath":"$.r","OutputPath":"$","Next":"T"},
	    "T":{"Type":"Task","Resource":"handler:work","TimeoutSeconds":60,"HeartbeatSeconds":10,
	         "OnlyOnce":false,"ResultSelector":{"v.$":"$.v"},"ResultPath":null,
	         "Retry":[{"ErrorEquals":["E"],"IntervalSeconds":2,"MaxAttempts":0,"BackoffRate":1,
	                   "MaxDelaySeconds":5,"JitterStrategy":"FULL","Comment":"r"},
	                  {"ErrorEquals":["States.ALL"]}],
	         "Catch":[{"ErrorEquals":["States.ALL"],"Next":"F","ResultPath":"$.err","Comment":"c"}],
	         "Next":"C"},
	    "C":{"Type":"Choice","Choices":[
	          {"Variable":"$.n","NumericGreaterThan":1,"Next":"W"},
	          {"And":[{"Variable":"$.s","StringMatches":"a*"},{"Not":{"Variable":"$.b","IsNull":true}}],
	           "Next":"W2"},
	          {"Variable":"$$.Execution.Id","IsPresent":true,"Next":"S"}],"Default":"S"},
	    "W":{"Type":"Wait","Seconds":1,"Next":"S"},
	    "W2":{"Type":"Wait","TimestampPath":"$.t","End":true},
	    "S":{"Type":"Succeed"},
	    "F":{"Type":"Fail","ErrorPath":"$.err.Error","Cause":"failed"}}})j";
	EXPECT_EQ(compile_error(std::string(def)), "<accepted>");
}

// AWS's Task Credentials load (a literal role or one from the input); genroc
// runs the task as its worker.
TEST(Compile, AcceptsTaskCredentials) {
	EXPECT_EQ(compile_error(one(R"({"Type":"Task","Resource":"genroc:noop","End":true,
	  "Credentials":{"RoleArn":"arn:aws:iam::1:role/r"}})")),
			  "<accepted>");
	EXPECT_EQ(compile_error(one(R"({"Type":"Task","Resource":"genroc:noop","End":true,
	  "Credentials":{"RoleArn.$":"$.role"}})")),
			  "<accepted>");
}

// AWS wants every state name unique across the definition, nested machines
// (Parallel branches, Map item processors) included.
TEST(Compile, StateNamesAreUniqueAcrossTheDefinition) {
	const Case cases[] = {
		{R"({"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		    {"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},
		    {"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}]}}})",
		 "invalid definition at $.States.P.Branches[1].States.A: the state name \"A\" is already "
		 "used at $.States.P.Branches[0].States.A: state names are unique across the whole "
		 "definition, branches and item processors included"},
		{R"({"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{
		    "StartAt":"M","States":{"M":{"Type":"Pass","End":true}}}}}})",
		 "invalid definition at $.States.M.ItemProcessor.States.M: the state name \"M\" is "
		 "already used at $.States.M: state names are unique across the whole definition, "
		 "branches and item processors included"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, AcceptsEveryResourceKind) {
	for (const char *r : {"handler:a", "activity:approve", "genroc:noop", "genroc:fail",
						  "genroc:sleep", "handler:x.y-z_1"})
		EXPECT_EQ(compile_error(one(std::string(R"({"Type":"Task","End":true,"Resource":")") + r +
									"\"}")),
				  "<accepted>")
			<< r;
}

TEST(Compile, TopLevel) {
	const Case cases[] = {
		{R"([])", "invalid definition at $: a definition must be a JSON object, not array"},
		{R"({"States":{"A":{"Type":"Succeed"}}})", "invalid definition at $.StartAt: is required"},
		{R"({"StartAt":"","States":{"A":{"Type":"Succeed"}}})",
		 "invalid definition at $.StartAt: must not be empty"},
		{R"({"StartAt":1,"States":{"A":{"Type":"Succeed"}}})",
		 "invalid definition at $.StartAt: must be a string, not number"},
		{R"({"StartAt":"A"})", "invalid definition at $.States: is required"},
		{R"({"StartAt":"A","States":{}})",
		 "invalid definition at $.States: must be a non-empty object of states"},
		{R"({"StartAt":"A","States":[]})",
		 "invalid definition at $.States: must be a non-empty object of states"},
		{R"({"StartAt":"B","States":{"A":{"Type":"Succeed"}}})",
		 "invalid definition at $.StartAt: unknown state \"B\""},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}},"Extra":1})",
		 "invalid definition at $.Extra: unknown field"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}},"TimeoutSeconds":0})",
		 "invalid definition at $.TimeoutSeconds: must be a positive integer"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}},"TimeoutSeconds":1.5})",
		 "invalid definition at $.TimeoutSeconds: must be a positive integer"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}},"Version":1})",
		 "invalid definition at $.Version: must be a string, not number"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed"}},"Comment":{}})",
		 "invalid definition at $.Comment: must be a string, not object"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, StateShape) {
	const Case cases[] = {
		{R"({"StartAt":"A","States":{"A":[]}})", "invalid definition at $.States.A: a state must be an object"},
		{R"({"StartAt":"A","States":{"A":{"End":true}}})", "invalid definition at $.States.A.Type: is required"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Nope","End":true}}})",
		 "invalid definition at $.States.A.Type: unknown state type \"Nope\""},
		{R"({"StartAt":"A","States":{"A":{"Type":"Parallel","End":true}}})",
		 "invalid definition at $.States.A.Branches: is required for a Parallel state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Parallel","Branches":[],"End":true}}})",
		 "invalid definition at $.States.A.Branches: must be a non-empty array of state machines"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","Next":"Y"}}}]}}})",
		 "invalid definition at $.States.A.Branches[0].States.X.Next: unknown state \"Y\""},
		{R"({"StartAt":"A","States":{"A":{"Type":"Map","End":true}}})",
		 "invalid definition at $.States.A.ItemProcessor: is required for a Map state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Map","End":true,"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}}}})",
		 "invalid definition at $.States.A.ItemProcessor.ProcessorConfig.Mode: distributed Map is not supported (only INLINE)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Map","End":true,"MaxConcurrency":-1,"Iterator":{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}}}})",
		 "invalid definition at $.States.A.MaxConcurrency: must be an integer >= 0 (0: no limit)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Map","End":true,"ItemReader":{},"Iterator":{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}}}})",
		 "invalid definition at $.States.A.ItemReader: reading items from or writing results to "
		 "Amazon S3 is not supported: genroc's Map takes its items from the state input "
		 "(ItemsPath) and returns its results as the state output"},
		{R"({"QueryLanguage":"JSONPath ","StartAt":"A","States":{"A":{"Type":"Pass","End":true}}})",
		 "invalid definition at $.QueryLanguage: must be \"JSONPath\" or \"JSONata\", not "
		 "\"JSONPath \""},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}})",
		 "invalid definition at $.States.A.Next: unknown state \"B\""},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass"}}})",
		 "invalid definition at $.States.A: a Pass state needs Next or End"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Next":"A"}}})",
		 "invalid definition at $.States.A: a state has either Next or End, not both"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":false}}})",
		 "invalid definition at $.States.A.End: must be true"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true},"B":{"Type":"Succeed"}}})",
		 "invalid definition at $.States.B: state \"B\" is unreachable from StartAt"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true},"my state":{"Type":"Succeed"}}})",
		 "invalid definition at $.States['my state']: state \"my state\" is unreachable from StartAt"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Comment":5}}})",
		 "invalid definition at $.States.A.Comment: must be a string, not number"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, UnknownFieldsPerType) {
	const Case cases[] = {
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Resource":"x"}}})",
		 "invalid definition at $.States.A.Resource: unknown field for a Pass state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"ResultSelector":{}}}})",
		 "invalid definition at $.States.A.ResultSelector: unknown field for a Pass state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed","Next":"A"}}})",
		 "invalid definition at $.States.A.Next: unknown field for a Succeed state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Succeed","Result":1}}})",
		 "invalid definition at $.States.A.Result: unknown field for a Succeed state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Fail","InputPath":"$"}}})",
		 "invalid definition at $.States.A.InputPath: unknown field for a Fail state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Fail","End":true}}})",
		 "invalid definition at $.States.A.End: unknown field for a Fail state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":1,"End":true,"Parameters":{}}}})",
		 "invalid definition at $.States.A.Parameters: unknown field for a Wait state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[],"ResultPath":"$"}}})",
		 "invalid definition at $.States.A.ResultPath: unknown field for a Choice state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Choice","Next":"A","Choices":[]}}})",
		 "invalid definition at $.States.A.Next: unknown field for a Choice state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"Seconds":1}}})",
		 "invalid definition at $.States.A.Seconds: unknown field for a Task state"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Retry":[]}}})",
		 "invalid definition at $.States.A.Retry: a Pass state cannot have Retry"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":1,"End":true,"Catch":[]}}})",
		 "invalid definition at $.States.A.Catch: a Wait state cannot have Catch"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, Paths) {
	const Case cases[] = {
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"InputPath":"a.b"}}})",
		 "invalid definition at $.States.A.InputPath: \"a.b\" is not a valid path: a path starts "
		 "with '$' at offset 0"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"OutputPath":"$.a["}}})",
		 "invalid definition at $.States.A.OutputPath: \"$.a[\" is not a valid path: expected an "
		 "index, a quoted name, '*', a slice or a filter at offset 4"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"InputPath":5}}})",
		 "invalid definition at $.States.A.InputPath: must be a string, not number"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"ResultPath":"$.a[*]"}}})",
		 "invalid definition at $.States.A.ResultPath: \"$.a[*]\" must be a reference path ($ and "
		 "field names or indices only)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"ResultPath":"$$.a"}}})",
		 "invalid definition at $.States.A.ResultPath: \"$$.a\" must be a reference path ($ and "
		 "field names or indices only)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"ResultPath":"$..a"}}})",
		 "invalid definition at $.States.A.ResultPath: \"$..a\" must be a reference path ($ and "
		 "field names or indices only)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"$.a b"}}}})",
		 "invalid definition at $.States.A.Parameters['x.$']: \"$.a b\" is not a valid path: "
		 "unexpected ' ' at offset 3"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":5}}}})",
		 "invalid definition at $.States.A.Parameters['x.$']: must be a string, not number"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"a"}}}})",
		 "invalid definition at $.States.A.Parameters['x.$']: a field ending in .$ takes a path or "
		 "an intrinsic function call, not \"a\""},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"deep":[{"x.$":"$["}]}}}})",
		 "invalid definition at $.States.A.Parameters.deep[0]['x.$']: \"$[\" is not a valid path: "
		 "expected an index, a quoted name, '*', a slice or a filter at offset 2"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x":1,"x.$":"$"}}}})",
		 "invalid definition at $.States.A.Parameters['x.$']: the field \"x\" is given twice (with "
		 "and without .$)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,
		   "ResultSelector":{"x.$":"$.["}}}})",
		 "invalid definition at $.States.A.ResultSelector['x.$']: \"$.[\" is not a valid path: "
		 "expected a field name at offset 2"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,
		   "ResultSelector":5}}})",
		 "invalid definition at $.States.A.ResultSelector: must be an object"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, Intrinsics) {
	const Case cases[] = {
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Nope(1)"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Nope(1)\" is not a valid "
		 "intrinsic function call: unknown intrinsic function \"States.Nope\" at offset 0"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.ArrayLength()"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.ArrayLength()\" is not a "
		 "valid intrinsic function call: States.ArrayLength takes 1 argument(s), not 0"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.UUID(1)"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.UUID(1)\" is not a valid "
		 "intrinsic function call: States.UUID takes 0 argument(s), not 1"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Format($.a"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Format($.a\" is not a valid "
		 "intrinsic function call: expected ',' or ')' in the arguments of States.Format at offset 17"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Hash('a', 'SHA-3')"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Hash('a', 'SHA-3')\" is not a "
		 "valid intrinsic function call: States.Hash: unknown algorithm \"SHA-3\" (MD5, SHA-1, "
		 "SHA-256, SHA-384 or SHA-512)"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.MathAdd('a', 1)"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.MathAdd('a', 1)\" is not a "
		 "valid intrinsic function call: States.MathAdd: argument 1 must be a number"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Array(1) x"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Array(1) x\" is not a valid "
		 "intrinsic function call: unexpected text after the call at offset 16"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Format('it''s')"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Format('it''s')\" is not a "
		 "valid intrinsic function call: expected ',' or ')' in the arguments of States.Format at "
		 "offset 18"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Format('say \\\"hi\\\"')"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Format('say \\\"hi\\\"')\" is "
		 "not a valid intrinsic function call: a backslash in a string may escape only ' { } or \\ "
		 "at offset 21"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Parameters":{"x.$":"States.Array(States.Nope())"}}}})j",
		 "invalid definition at $.States.A.Parameters['x.$']: \"States.Array(States.Nope())\" is not "
		 "a valid intrinsic function call: unknown intrinsic function \"States.Nope\" at offset 13"},
		{R"j({"StartAt":"A","States":{"A":{"Type":"Fail","CausePath":"States.Nope()"}}})j",
		 "invalid definition at $.States.A.CausePath: \"States.Nope()\" is not a valid intrinsic "
		 "function call: unknown intrinsic function \"States.Nope\" at offset 0"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, Task) {
	const Case cases[] = {
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","End":true}}})",
		 "invalid definition at $.States.A.Resource: is required for a Task"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:x","End":true}}})",
		 "invalid definition at $.States.A.Resource: unknown resource \"arn:aws:lambda:x\" (use "
		 "handler:NAME, activity:NAME, genroc:noop, genroc:fail, genroc:sleep, genroc:event, "
		 "genroc:call or genroc:call.sync)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"handler:","End":true}}})",
		 "invalid definition at $.States.A.Resource: \"handler:\" needs a name after the colon"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"activity:a b","End":true}}})",
		 "invalid definition at $.States.A.Resource: the name in \"activity:a b\" must not contain "
		 "spaces or control characters"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:call.async","End":true}}})",
		 "invalid definition at $.States.A.Resource: unknown resource \"genroc:call.async\" (use "
		 "handler:NAME, activity:NAME, genroc:noop, genroc:fail, genroc:sleep, genroc:event, "
		 "genroc:call or genroc:call.sync)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:other","End":true}}})",
		 "invalid definition at $.States.A.Resource: unknown resource \"genroc:other\" (use "
		 "handler:NAME, activity:NAME, genroc:noop, genroc:fail, genroc:sleep, genroc:event, "
		 "genroc:call or genroc:call.sync)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"TimeoutSeconds":0}}})",
		 "invalid definition at $.States.A.TimeoutSeconds: must be a positive integer"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"TimeoutSeconds":"5"}}})",
		 "invalid definition at $.States.A.TimeoutSeconds: must be a positive integer"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"HeartbeatSeconds":-1}}})",
		 "invalid definition at $.States.A.HeartbeatSeconds: must be a positive integer"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,
		   "TimeoutSeconds":10,"HeartbeatSeconds":10}}})",
		 "invalid definition at $.States.A.HeartbeatSeconds: must be smaller than TimeoutSeconds"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,
		   "TimeoutSeconds":10,"TimeoutSecondsPath":"$.t"}}})",
		 "invalid definition at $.States.A.TimeoutSecondsPath: cannot be used together with "
		 "TimeoutSeconds"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,
		   "HeartbeatSeconds":10,"HeartbeatSecondsPath":"$.t"}}})",
		 "invalid definition at $.States.A.HeartbeatSecondsPath: cannot be used together with "
		 "HeartbeatSeconds"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,
		   "TimeoutSecondsPath":"$.t[*]"}}})",
		 "invalid definition at $.States.A.TimeoutSecondsPath: \"$.t[*]\" must be a reference path "
		 "($ or a $variable and field names or indices only)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"OnlyOnce":"yes"}}})",
		 "invalid definition at $.States.A.OnlyOnce: must be true or false"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"Credentials":"role"}}})",
		 "invalid definition at $.States.A.Credentials: must be an object"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop","End":true,"Credentials":{"RoleArn.$":"nope"}}}})",
		 "invalid definition at $.States.A.Credentials['RoleArn.$']: a field ending in .$ takes a "
		 "path or an intrinsic function call, not \"nope\""},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, RetryAndCatch) {
	auto task = [](const std::string &extra) {
		return one(R"({"Type":"Task","Resource":"genroc:noop","End":true,)" + extra + "}");
	};
	const std::pair<std::string, const char *> cases[] = {
		{task(R"("Retry":{})"), "invalid definition at $.States.A.Retry: must be an array"},
		{task(R"("Retry":[1])"), "invalid definition at $.States.A.Retry[0]: must be an object"},
		{task(R"("Retry":[{}])"), "invalid definition at $.States.A.Retry[0].ErrorEquals: is required"},
		{task(R"("Retry":[{"ErrorEquals":[]}])"),
		 "invalid definition at $.States.A.Retry[0].ErrorEquals: must be a non-empty array of error names"},
		{task(R"("Retry":[{"ErrorEquals":[""]}])"),
		 "invalid definition at $.States.A.Retry[0].ErrorEquals[0]: an error name must not be empty"},
		{task(R"("Retry":[{"ErrorEquals":[5]}])"),
		 "invalid definition at $.States.A.Retry[0].ErrorEquals[0]: must be a string, not number"},
		{task(R"("Retry":[{"ErrorEquals":["E","States.ALL"]}])"),
		 "invalid definition at $.States.A.Retry[0].ErrorEquals[1]: States.ALL must appear alone in ErrorEquals"},
		{task(R"("Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["E"]}])"),
		 "invalid definition at $.States.A.Retry[0].ErrorEquals[0]: a States.ALL entry must be the last one"},
		{task(R"("Retry":[{"ErrorEquals":["E"],"MaxAttempts":-1}])"),
		 "invalid definition at $.States.A.Retry[0].MaxAttempts: must be an integer >= 0"},
		{task(R"("Retry":[{"ErrorEquals":["E"],"MaxAttempts":1.5}])"),
		 "invalid definition at $.States.A.Retry[0].MaxAttempts: must be an integer >= 0"},
		{task(R"("Retry":[{"ErrorEquals":["E"],"BackoffRate":0.5}])"),
		 "invalid definition at $.States.A.Retry[0].BackoffRate: must be a number >= 1.0"},
		{task(R"("Retry":[{"ErrorEquals":["E"],"IntervalSeconds":0}])"),
		 "invalid definition at $.States.A.Retry[0].IntervalSeconds: must be a positive integer"},
		{task(R"("Retry":[{"ErrorEquals":["E"],"MaxDelaySeconds":0}])"),
		 "invalid definition at $.States.A.Retry[0].MaxDelaySeconds: must be a positive integer"},
		{task(R"("Retry":[{"ErrorEquals":["E"],"JitterStrategy":"HALF"}])"),
		 "invalid definition at $.States.A.Retry[0].JitterStrategy: must be \"FULL\" or \"NONE\", not \"HALF\""},
		{task(R"("Retry":[{"ErrorEquals":["E"],"Next":"A"}])"),
		 "invalid definition at $.States.A.Retry[0].Next: unknown field"},
		{task(R"("Catch":[{"ErrorEquals":["E"]}])"),
		 "invalid definition at $.States.A.Catch[0].Next: is required"},
		{task(R"("Catch":[{"ErrorEquals":["E"],"Next":"Z"}])"),
		 "invalid definition at $.States.A.Catch[0].Next: unknown state \"Z\""},
		{task(R"("Catch":[{"Next":"A"}])"),
		 "invalid definition at $.States.A.Catch[0].ErrorEquals: is required"},
		{task(R"("Catch":[{"ErrorEquals":["States.ALL"],"Next":"A"},{"ErrorEquals":["E"],"Next":"A"}])"),
		 "invalid definition at $.States.A.Catch[0].ErrorEquals[0]: a States.ALL entry must be the last one"},
		{task(R"("Catch":[{"ErrorEquals":["E"],"Next":"A","ResultPath":"$.x[*]"}])"),
		 "invalid definition at $.States.A.Catch[0].ResultPath: \"$.x[*]\" must be a reference path "
		 "($ and field names or indices only)"},
		{task(R"("Catch":[{"ErrorEquals":["E"],"Next":"A","Retry":1}])"),
		 "invalid definition at $.States.A.Catch[0].Retry: unknown field"},
	};
	for (const auto &[def, msg] : cases)
		EXPECT_EQ(compile_error(def), msg) << def;
}

TEST(Compile, CatchNextMakesAStateReachable) {
	EXPECT_EQ(compile_error(R"({"StartAt":"A","States":{"A":{"Type":"Task","Resource":"genroc:noop",
	  "End":true,"Catch":[{"ErrorEquals":["E"],"Next":"B"}]},"B":{"Type":"Succeed"}}})"),
			  "<accepted>");
}

TEST(Compile, Choice) {
	auto choice = [](const std::string &rules, const std::string &extra = "") {
		return R"({"StartAt":"A","States":{"A":{"Type":"Choice","Choices":)" + rules + extra +
			   R"(},"B":{"Type":"Succeed"}}})";
	};
	const std::pair<std::string, const char *> cases[] = {
		{R"({"StartAt":"A","States":{"A":{"Type":"Choice"}}})",
		 "invalid definition at $.States.A.Choices: is required for a Choice state"},
		{choice("[]"), "invalid definition at $.States.A.Choices: must be a non-empty array of rules"},
		{choice("[1]"), "invalid definition at $.States.A.Choices[0]: a choice rule must be an object"},
		{choice(R"([{"Variable":"$.x","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0]: a rule needs a comparison operator or And, Or, Not"},
		{choice(R"([{"Variable":"$.x","StringEqualz":"a","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].StringEqualz: unknown choice operator"},
		{choice(R"([{"Variable":"$.x","StringEquals":"a","IsNull":true,"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].StringEquals: a rule has exactly one operator, "
		 "but this one also has IsNull"},
		{choice(R"([{"Variable":"$.x","StringEquals":"a","Next":"Z"}])"),
		 "invalid definition at $.States.A.Choices[0].Next: unknown state \"Z\""},
		{choice(R"([{"Variable":"$.x","StringEquals":"a"}])"),
		 "invalid definition at $.States.A.Choices[0].Next: is required in a top-level choice rule"},
		{choice(R"([{"StringEquals":"a","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].Variable: is required with StringEquals"},
		{choice(R"([{"Variable":"x","StringEquals":"a","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].Variable: \"x\" is not a valid path: a path "
		 "starts with '$' at offset 0"},
		{choice(R"([{"Variable":"$.x","StringEquals":1,"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].StringEquals: must be a string, not number"},
		{choice(R"([{"Variable":"$.x","NumericEquals":"1","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].NumericEquals: must be a number"},
		{choice(R"([{"Variable":"$.x","BooleanEquals":1,"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].BooleanEquals: must be a boolean"},
		{choice(R"([{"Variable":"$.x","BooleanLessThan":true,"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].BooleanLessThan: unknown choice operator"},
		{choice(R"([{"Variable":"$.x","TimestampEquals":"yesterday","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].TimestampEquals: \"yesterday\" is not an RFC "
		 "3339 timestamp"},
		{choice(R"([{"Variable":"$.x","StringEqualsPath":"nope","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].StringEqualsPath: \"nope\" is not a valid path: "
		 "a path starts with '$' at offset 0"},
		{choice(R"([{"Variable":"$.x","IsNull":"yes","Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].IsNull: must be true or false"},
		{choice(R"([{"And":[],"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].And: must be a non-empty array of rules"},
		{choice(R"([{"Or":{},"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].Or: must be a non-empty array of rules"},
		{choice(R"([{"Variable":"$.x","And":[{"Variable":"$.x","IsNull":true}],"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].Variable: And takes no Variable"},
		{choice(R"([{"And":[{"Variable":"$.x","IsNull":true,"Next":"B"}],"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].And[0].Next: a nested rule (inside And, Or or "
		 "Not) has no Next"},
		{choice(R"([{"Not":{"Variable":"$.x","Nope":1},"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].Not.Nope: unknown choice operator"},
		{choice(R"([{"Or":[{"Variable":"$.x","IsNull":true},{"Not":{"Variable":"$.y","NumericEquals":"x"}}],"Next":"B"}])"),
		 "invalid definition at $.States.A.Choices[0].Or[1].Not.NumericEquals: must be a number"},
		{choice(R"([{"Variable":"$.x","IsNull":true,"Next":"B"}])", R"(,"Default":"Z")"),
		 "invalid definition at $.States.A.Default: unknown state \"Z\""},
	};
	for (const auto &[def, msg] : cases)
		EXPECT_EQ(compile_error(def), msg) << def;
}

TEST(Compile, ChoiceDefaultMakesAStateReachable) {
	EXPECT_EQ(compile_error(R"({"StartAt":"A","States":{"A":{"Type":"Choice",
	  "Choices":[{"Variable":"$.x","IsPresent":true,"Next":"B"}],"Default":"C"},
	  "B":{"Type":"Succeed"},"C":{"Type":"Succeed"}}})"),
			  "<accepted>");
}

TEST(Compile, Wait) {
	const Case cases[] = {
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","End":true}}})",
		 "invalid definition at $.States.A: a Wait state needs exactly one of Seconds, Timestamp, "
		 "SecondsPath, TimestampPath"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":1,"SecondsPath":"$.s","End":true}}})",
		 "invalid definition at $.States.A: a Wait state needs exactly one of Seconds, Timestamp, "
		 "SecondsPath, TimestampPath"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":-1,"End":true}}})",
		 "invalid definition at $.States.A.Seconds: must be an integer >= 0 (and at most 3153600000)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":"5","End":true}}})",
		 "invalid definition at $.States.A.Seconds: must be an integer >= 0 (and at most 3153600000)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","Timestamp":"2026-13-01T00:00:00Z","End":true}}})",
		 "invalid definition at $.States.A.Timestamp: \"2026-13-01T00:00:00Z\" is not an RFC 3339 "
		 "timestamp"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","SecondsPath":"$.a[0:1]","End":true}}})",
		 "invalid definition at $.States.A.SecondsPath: \"$.a[0:1]\" must be a reference path ($ or a "
		 "$variable and field names or indices only)"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Wait","TimestampPath":"t","End":true}}})",
		 "invalid definition at $.States.A.TimestampPath: \"t\" is not a valid path: a path starts "
		 "with '$' at offset 0"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, Fail) {
	const Case cases[] = {
		{R"({"StartAt":"A","States":{"A":{"Type":"Fail","Error":"E","ErrorPath":"$.e"}}})",
		 "invalid definition at $.States.A.ErrorPath: cannot be used together with Error"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Fail","Cause":"C","CausePath":"$.c"}}})",
		 "invalid definition at $.States.A.CausePath: cannot be used together with Cause"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Fail","Error":5}}})",
		 "invalid definition at $.States.A.Error: must be a string, not number"},
		{R"({"StartAt":"A","States":{"A":{"Type":"Fail","CausePath":"c"}}})",
		 "invalid definition at $.States.A.CausePath: \"c\" is not a valid path: a path starts with "
		 "'$' at offset 0"},
	};
	for (const auto &c : cases)
		expect_refused(c);
}

TEST(Compile, ErrorCarriesRC001) {
	try {
		asl::compile(J(R"({"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}})"));
		FAIL() << "accepted";
	} catch (const Error &e) {
		EXPECT_EQ(e.sqlstate, "RC001");
		EXPECT_STREQ(e.what(), "invalid definition at $.States.A.Next: unknown state \"B\"");
	}
}
