/* json_file.h — one JSON file read and parsed with cJSON (Debian libcjson-dev), for the pipeline's
 * tokenizer, scheduler, session and engine. */
#ifndef SDP_JSON_FILE_H
#define SDP_JSON_FILE_H

#include <stddef.h>

struct cJSON;

/* Reads and parses the JSON file at path as Python's json.load does: outside strings, Infinity and
 * -Infinity are read as +-inf and NaN as null (Python's json.dump writes them; cJSON alone refuses
 * them). Regular files only: a FIFO without a writer is refused, never waited on. Text after the
 * value (other than whitespace) is refused.
 * Returns the tree (cJSON_Delete it), or NULL with one of these messages in err (errcap bytes):
 *   "PATH: cannot read: <strerror>", "PATH: not a regular file", "PATH: read error",
 *   "PATH: out of memory",
 *   "PATH:LINE:COL: unterminated string", "PATH:LINE:COL: unexpected end of input",
 *   "PATH:LINE:COL: not valid JSON" (any other syntax error; LINE and COL 1-based, where cJSON
 *   stopped, counted in the file as written). */
struct cJSON *sdp_json_file(const char *path, char *err, size_t errcap);

#endif
