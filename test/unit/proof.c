/* The proof's JSON: a partial check is recorded as failed and partial, and not demanded. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "tap.h"

static json_t *proof(const ows__check *c, size_t n, bool *passed)
{
	char *s = ows__proof_json("landlock", "open", c, n, passed);
	json_t *j = s ? json_loads(s, 0, NULL) : NULL;
	free(s);
	return j;
}

int main(void)
{
	ows__check c[2] = {{"home not listable", "EACCES", 1},
			   {"abstract socket unreachable", "connected: partial", OWS__CHECK_PARTIAL}};
	bool passed = false;
	json_t *j = proof(c, 2, &passed);
	ok(j != NULL, "valid JSON");
	ok(passed && json_is_true(json_object_get(j, "passed")), "a partial check fails no proof");
	json_t *k = json_array_get(json_object_get(j, "checks"), 1);
	ok(json_is_false(json_object_get(k, "passed")), "the partial check is not passed");
	ok(json_is_true(json_object_get(k, "partial")), "and says partial");
	ok(!json_object_get(json_array_get(json_object_get(j, "checks"), 0), "partial"),
	   "a whole check has no partial key");
	json_decref(j);

	c[1].passed = 0;
	j = proof(c, 2, &passed);
	ok(!passed && json_is_false(json_object_get(j, "passed")), "a failed check fails the proof");
	ok(!json_object_get(json_array_get(json_object_get(j, "checks"), 1), "partial"),
	   "and is not partial");
	json_decref(j);
	return done_testing();
}
