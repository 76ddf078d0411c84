/* preload_rules.c - unit tests of the PRELOAD rule compiler and matcher: every
 * wildcard, the placeholders, prefixes, errors with file:line, rule directories. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "scr_config.h"
#include "scr_error.h"
#include "scr_kvtree.h"
#include "scr_param.h"
#include "scr_preload_rules.h"
#include "tap.h"

#define PREFIX "/p/run"

static char err[1024];

/* compile the PRELOAD lines of a configuration text; the first line is a
 * comment so that origins are numbered "rules.conf:N" with rules from line 2 */
static scr_preload_ruleset* compile_with(const char* lines, const char* prefix, int* rc)
{
  char text[4096];
  snprintf(text, sizeof(text), "# rules\n%s", lines);
  scr_kvtree* tree = scr_kvtree_new();
  err[0] = '\0';
  scr_preload_ruleset* set = NULL;
  *rc = scr_config_parse_string(text, "rules.conf", tree, err, sizeof(err));
  if (*rc == SCR_SUCCESS) *rc = scr_preload_rules_compile(scr_kvtree_get(tree, "PRELOAD"), prefix, &set, err, sizeof(err));
  scr_kvtree_delete(&tree);
  return set;
}

static scr_preload_ruleset* compile(const char* lines)
{
  int rc;
  scr_preload_ruleset* set = compile_with(lines, PREFIX, &rc);
  if (rc != SCR_SUCCESS) printf("# unexpected error: %s\n", err);
  return set;
}

static int match(const scr_preload_ruleset* set, const char* path, scr_preload_match* m)
{
  scr_preload_match ignored;
  return scr_preload_rules_match(set, path, strlen(path), m ? m : &ignored);
}

static int directory(const scr_preload_ruleset* set, const char* path, scr_preload_match* m)
{
  scr_preload_match ignored;
  return scr_preload_rules_match_directory(set, path, strlen(path), m ? m : &ignored);
}

/* the message of a pattern that must not compile */
static void bad(const char* line, const char* where, const char* what, const char* name)
{
  int rc;
  scr_preload_ruleset* set = compile_with(line, PREFIX, &rc);
  is_int(rc, SCR_ERR_CONFIG, "error: %s", name);
  ok(set == NULL, "error: %s leaves no rule set", name);
  if (!ok(strstr(err, where) && strstr(err, what), "error: %s says where and what", name))
    printf("#   message '%s', want '%s' and '%s'\n", err, where, what);
  scr_preload_rules_free(&set);
}

static void test_literal_and_wildcards(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=ckpt.latest\n");
  is_int(scr_preload_rules_count(set), 1, "one rule compiled");
  scr_preload_match m;
  is_int(match(set, PREFIX "/ckpt.latest", &m), 0, "literal: the exact path matches");
  ok(m.step == -1 && m.rank == -1 && m.step_length == 0, "literal: nothing captured");
  is_int(match(set, PREFIX "/ckpt.latest2", NULL), -1, "literal: a longer name does not match");
  is_int(match(set, PREFIX "/ckpt.lates", NULL), -1, "literal: a shorter name does not match");
  is_int(match(set, PREFIX "/sub/ckpt.latest", NULL), -1, "literal: the same name elsewhere does not match");
  is_str(scr_preload_rules_at(set, 0)->path, PREFIX "/ckpt.latest", "literal: compiled against the prefix");
  is_str(scr_preload_rules_at(set, 0)->directory, PREFIX, "literal: its directory is the prefix");
  scr_preload_rules_free(&set);
  ok(set == NULL, "free clears the pointer");

  set = compile("PRELOAD=out/*.dat\nPRELOAD=r?.dat\nPRELOAD=f[abc].txt\nPRELOAD=g[!a].txt\n"
                "PRELOAD=n[0-9][]x-].txt\nPRELOAD=a\\*b\n");
  is_int(match(set, PREFIX "/out/a.dat", NULL), 0, "*: matches a name");
  is_int(match(set, PREFIX "/out/.dat", NULL), 0, "*: matches nothing at all");
  is_int(match(set, PREFIX "/out/a/b.dat", NULL), -1, "*: does not cross '/'");
  is_int(match(set, PREFIX "/out/a.dat.bak", NULL), -1, "*: the literal after it must end the path");
  is_int(match(set, PREFIX "/r1.dat", NULL), 1, "?: one character");
  is_int(match(set, PREFIX "/r12.dat", NULL), -1, "?: not two");
  is_int(match(set, PREFIX "/r.dat", NULL), -1, "?: not zero");
  is_int(match(set, PREFIX "/r/.dat", NULL), -1, "?: not '/'");
  is_int(match(set, PREFIX "/fb.txt", NULL), 2, "[abc]: a member");
  is_int(match(set, PREFIX "/fd.txt", NULL), -1, "[abc]: not a non-member");
  is_int(match(set, PREFIX "/gb.txt", NULL), 3, "[!a]: a non-member");
  is_int(match(set, PREFIX "/ga.txt", NULL), -1, "[!a]: not the member");
  is_int(match(set, PREFIX "/g/.txt", NULL), -1, "[!a]: never '/'");
  is_int(match(set, PREFIX "/n7].txt", NULL), 4, "[0-9] and []x-]: range, leading ']'");
  is_int(match(set, PREFIX "/n0-.txt", NULL), 4, "[]x-]: trailing '-' is a member");
  is_int(match(set, PREFIX "/na].txt", NULL), -1, "[0-9]: a letter is outside the range");
  is_int(match(set, PREFIX "/a*b", NULL), 5, "\\*: an escaped star is literal");
  is_int(match(set, PREFIX "/axb", NULL), -1, "\\*: and matches nothing else");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=data/**/state.h5\nPRELOAD=logs/**\nPRELOAD=a**z\n");
  is_int(match(set, PREFIX "/data/state.h5", NULL), 0, "**/: zero directories");
  is_int(match(set, PREFIX "/data/a/state.h5", NULL), 0, "**/: one directory");
  is_int(match(set, PREFIX "/data/a/b/c/state.h5", NULL), 0, "**/: several directories");
  is_int(match(set, PREFIX "/datax/state.h5", NULL), -1, "**/: the literal before it is a whole component");
  is_int(match(set, PREFIX "/data/a/xstate.h5", NULL), -1, "**/: the literal after it is a whole component");
  is_int(match(set, PREFIX "/logs/a/b", NULL), 1, "trailing **: anything below");
  is_int(match(set, PREFIX "/a/b/z", NULL), 2, "** inside a component crosses '/'");
  is_int(match(set, PREFIX "/az", NULL), 2, "** inside a component may match nothing");
  scr_preload_rules_free(&set);
}

static void test_placeholders(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=ckpt.{step}/rank_{rank}.dat\n");
  scr_preload_match m;
  const char* path = PREFIX "/ckpt.12/rank_3.dat";
  is_int(match(set, path, &m), 0, "{step} and {rank} match");
  is_int(m.step, 12, "{step} captured as a number");
  is_int(m.rank, 3, "{rank} captured as a number");
  is_int(m.step_offset, strlen(PREFIX "/ckpt."), "{step} offset within the path");
  is_int(m.step_length, 2, "{step} length");
  ok(strncmp(path + m.rank_offset, "3", m.rank_length) == 0 && m.rank_length == 1, "{rank} text");
  is_int(match(set, PREFIX "/ckpt.007/rank_0004.dat", &m), 0, "leading zeros match");
  ok(m.step == 7 && m.step_length == 3 && m.rank == 4 && m.rank_length == 4, "leading zeros kept in the text only");
  is_int(match(set, PREFIX "/ckpt.x/rank_1.dat", NULL), -1, "{step}: letters do not match");
  is_int(match(set, PREFIX "/ckpt./rank_1.dat", NULL), -1, "{step}: at least one digit");
  is_int(match(set, PREFIX "/ckpt.1a/rank_1.dat", NULL), -1, "{step}: digits only");
  is_int(match(set, PREFIX "/ckpt.-1/rank_1.dat", NULL), -1, "{step}: no sign");
  is_int(match(set, PREFIX "/ckpt.123456789012345678/rank_1.dat", &m), 0, "{step}: 18 digits");
  ok(m.step == 123456789012345678LL, "{step}: 18 digits fit");
  is_int(match(set, PREFIX "/ckpt.1234567890123456789/rank_1.dat", NULL), -1, "{step}: not 19");
  is_int(match(set, PREFIX "/ckpt.1/rank_1.dat/extra", NULL), -1, "a trailing component does not match");
  is_int(match(set, PREFIX "/ckpt.1/rank_1.dat.tmp", NULL), -1, "a trailing suffix does not match");
  is_int(match(set, PREFIX "/ckpt.1/sub/rank_1.dat", NULL), -1, "an extra directory does not match");
  const scr_preload_rule* rule = scr_preload_rules_at(set, 0);
  ok(rule->has_step && rule->has_rank, "the rule knows it has both placeholders");
  is_str(rule->directory, PREFIX, "directory of ckpt.{step}/... is the prefix");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=rank{rank}.out\nPRELOAD=ck_{step}_{rank}.dat\nPRELOAD=snap*{step}\n");
  is_int(match(set, PREFIX "/rank17.out", &m), 0, "{rank} alone");
  ok(m.rank == 17 && m.step == -1 && m.step_length == 0, "{rank} alone: no step");
  is_int(match(set, PREFIX "/ck_5_6.dat", &m), 1, "two placeholders in one name");
  ok(m.step == 5 && m.rank == 6, "two placeholders in one name: both captured");
  is_int(match(set, PREFIX "/snap.12", &m), 2, "* before {step}");
  is_int(m.step, 12, "* takes as little as it can, {step} every digit");
  ok(scr_preload_rules_at(set, 0)->has_rank && !scr_preload_rules_at(set, 0)->has_step, "rank-only rule flags");
  scr_preload_rules_free(&set);
}

static void test_prefixes_and_order(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=/scratch/x/{step}.dat\nPRELOAD=sub/./x/../y.{step}\n"
                                     "PRELOAD=../shared/{step}.ckpt\nPRELOAD=//twice//{step}\n");
  is_int(match(set, "/scratch/x/3.dat", NULL), 0, "an absolute pattern ignores the prefix");
  is_int(match(set, PREFIX "/scratch/x/3.dat", NULL), -1, "an absolute pattern is not under the prefix");
  is_str(scr_preload_rules_at(set, 1)->path, PREFIX "/sub/y.{step}", "'.' and '..' are applied");
  is_int(match(set, PREFIX "/sub/y.4", NULL), 1, "the normalized pattern matches");
  is_str(scr_preload_rules_at(set, 2)->path, "/p/shared/{step}.ckpt", "'..' may leave the prefix");
  is_str(scr_preload_rules_at(set, 3)->path, "/twice/{step}", "'//' collapses");
  is_str(scr_preload_rules_common_prefix(set), "/", "common prefix of unrelated rules is '/'");
  is_int(match(set, "/usr/lib/libc.so.6", NULL), -1, "a system path does not match");
  is_int(match(set, "/", NULL), -1, "the root does not match");
  is_int(match(set, "", NULL), -1, "the empty path does not match");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=ckpt.{step}/*\nPRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=ckpt.{step}/meta\n");
  is_int(match(set, PREFIX "/ckpt.1/rank_0.dat", NULL), 0, "the first rule in order wins");
  is_str(scr_preload_rules_common_prefix(set), PREFIX "/ckpt.", "common literal prefix of the rules");
  char common_dir[256];
  is_str(scr_preload_rules_common_directory(set, common_dir, sizeof(common_dir)), PREFIX "/",
         "common directory: the prefix up to its last '/'");
  ok(scr_preload_rules_common_directory(set, common_dir, 4) == NULL, "common directory: NULL when it does not fit");
  ok(scr_preload_rules_common_directory(NULL, common_dir, sizeof(common_dir)) == NULL, "common directory: no rules");
  is_int(match(set, PREFIX "/ckpt", NULL), -1, "a path shorter than the common prefix");
  is_int(match(set, PREFIX "/output.log", NULL), -1, "a path under the prefix but outside the rules");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=/a/{step}\nPRELOAD=/a/b{step}\nPRELOAD=/a/c.dat\n");
  is_str(scr_preload_rules_common_prefix(set), "/a/", "common prefix when one rule's prefix is all of it");
  is_int(match(set, "/a/7", NULL), 0, "a wildcard right after the common prefix");
  is_int(match(set, "/a/b7", NULL), 1, "a literal right after the common prefix");
  is_int(match(set, "/a/c.dat", NULL), 2, "a literal rule beside them");
  is_int(match(set, "/a/", NULL), -1, "the common prefix alone");
  scr_preload_rules_free(&set);
  set = compile("PRELOAD=/a/x{step}\nPRELOAD=/a/y{step}\n");
  is_int(match(set, "/a/z1", NULL), -1, "a byte after the common prefix that no rule has");
  is_int(match(set, "/a/y1", NULL), 1, "a byte after the common prefix that a rule has");
  is_int(match(set, "/a/", NULL), -1, "a path as long as the common prefix");
  scr_preload_rules_free(&set);

  int rc;
  set = compile_with("PRELOAD=a.dat\n", "/p/[run]*", &rc);
  is_int(match(set, "/p/[run]*/a.dat", NULL), 0, "prefix characters are literal");
  is_int(match(set, "/p/r*/a.dat", NULL), -1, "prefix characters are not wildcards");
  scr_preload_rules_free(&set);
  set = compile_with("PRELOAD=a.dat\n", "/p/q/../r/", &rc);
  is_str(scr_preload_rules_at(set, 0)->path, "/p/r/a.dat", "the prefix is normalized");
  scr_preload_rules_free(&set);

  set = compile("");
  ok(set != NULL && scr_preload_rules_count(set) == 0, "no rules: an empty set");
  is_int(match(set, "/", NULL), -1, "empty set: nothing matches, not even /");
  is_int(match(set, PREFIX "/x", NULL), -1, "empty set: nothing under the prefix");
  is_int(directory(set, PREFIX, NULL), -1, "empty set: no rule directory");
  scr_preload_rules_free(&set);
  is_int(match(NULL, "/x", NULL), -1, "a NULL rule set matches nothing");
}

static void test_attributes(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=out.{step} TYPE=OUTPUT BOUNDARY=barrier FILES=2 CALLER=write_*\n"
                                     "PRELOAD=c.{step}\n");
  const scr_preload_rule* rule = scr_preload_rules_at(set, 0);
  is_int(rule->type, SCR_PRELOAD_TYPE_OUTPUT, "TYPE=OUTPUT");
  is_int(rule->boundary, SCR_PRELOAD_BOUNDARY_BARRIER, "BOUNDARY=BARRIER");
  is_int(rule->files, 2, "FILES=2");
  is_str(rule->caller, "write_*", "CALLER kept");
  is_str(rule->origin, "rules.conf:2", "origin from the parsed file");
  is_str(rule->pattern, "out.{step}", "pattern as written");
  rule = scr_preload_rules_at(set, 1);
  ok(rule->type == SCR_PRELOAD_TYPE_CHECKPOINT && rule->boundary == SCR_PRELOAD_BOUNDARY_CLOSE &&
     rule->files == 0 && rule->caller == NULL, "defaults: CHECKPOINT, CLOSE, no FILES, no CALLER");
  ok(scr_preload_rules_at(set, 2) == NULL && scr_preload_rules_at(set, -1) == NULL, "out-of-range index");
  scr_preload_rules_free(&set);

  /* a tree built by hand (no parser checks): the compiler checks on its own */
  scr_kvtree* tree = scr_kvtree_new();
  scr_kvtree* desc = scr_kvtree_set(tree, "x.{step}", scr_kvtree_new());
  scr_kvtree_set_kv(desc, "TYPE", "BOGUS");
  scr_kvtree_set_kv(desc, "@ORIGIN", "hand.conf:7");
  is_int(scr_preload_rules_compile(tree, PREFIX, &set, err, sizeof(err)), SCR_ERR_CONFIG, "TYPE=BOGUS is an error");
  ok(strstr(err, "hand.conf:7: key PRELOAD: pattern 'x.{step}'") && strstr(err, "TYPE=BOGUS"),
     "TYPE=BOGUS message names origin, pattern and value");
  scr_kvtree_set_kv(desc, "TYPE", "output");
  scr_kvtree_set_kv(desc, "FILES", "0");
  is_int(scr_preload_rules_compile(tree, PREFIX, &set, err, sizeof(err)), SCR_ERR_CONFIG, "FILES=0 is an error");
  scr_kvtree_unset(desc, "FILES");
  scr_kvtree_set_kv(desc, "COLOR", "red");
  is_int(scr_preload_rules_compile(tree, PREFIX, &set, err, sizeof(err)), SCR_ERR_CONFIG, "an unknown attribute is an error");
  ok(strstr(err, "COLOR") != NULL, "the unknown attribute is named");
  scr_kvtree_unset(desc, "COLOR");
  is_int(scr_preload_rules_compile(tree, "relative/prefix", &set, err, sizeof(err)), SCR_ERR_INVALID,
         "a relative prefix is refused");
  is_int(scr_preload_rules_compile(tree, PREFIX, &set, err, sizeof(err)), SCR_SUCCESS, "type is case-insensitive");
  is_int(scr_preload_rules_at(set, 0)->type, SCR_PRELOAD_TYPE_OUTPUT, "TYPE=output");
  scr_preload_rules_free(&set);
  scr_kvtree_delete(&tree);
}

static void test_errors(void)
{
  bad("PRELOAD=ckpt[.dat\n", "rules.conf:2: key PRELOAD: pattern 'ckpt[.dat'", "'[' at character 5 has no closing ']'",
      "unbalanced [");
  bad("PRELOAD=x\nPRELOAD=ckpt[a/b].dat\n", "rules.conf:3:", "no closing ']'", "a set cannot hold '/'");
  bad("PRELOAD=a.{step}/b.{step}\n", "rules.conf:2:", "{step} appears twice", "{step} twice");
  bad("PRELOAD={rank}/x{rank}\n", "rules.conf:2:", "{rank} appears twice", "{rank} twice");
  bad("PRELOAD=x.{stp}\n", "pattern 'x.{stp}'", "unknown placeholder {stp}", "unknown placeholder");
  bad("PRELOAD=x{a,b}\n", "rules.conf:2:", "unknown placeholder {a,b}", "brace alternatives are not placeholders");
  bad("PRELOAD=x.{step\n", "rules.conf:2:", "'{' at character 3 has no closing '}'", "unbalanced {");
  bad("PRELOAD=x}y\n", "rules.conf:2:", "'}' at character 2 has no opening '{'", "stray }");
  bad("PRELOAD={step}{rank}\n", "rules.conf:2:", "two placeholders meet", "adjacent placeholders");
  bad("PRELOAD=x[z-a]\n", "rules.conf:2:", "reversed range", "reversed range");
  bad("PRELOAD=x\\\n", "rules.conf:2:", "escapes nothing", "trailing backslash");
  bad("PRELOAD=*/../x\n", "rules.conf:2:", "'..' follows a component with wildcards", ".. after a wildcard");
  bad("PRELOAD=.\n", "rules.conf:2:", "names a directory", "'.' names the prefix");
  bad("PRELOAD=a/..\n", "rules.conf:2:", "names a directory", "'a/..' names the prefix");

  /* descriptors merged by the param module carry no @ORIGIN: the param module knows it */
  scr_kvtree* user = scr_kvtree_new();
  is_int(scr_config_parse_string("SCR_FLUSH=1\nPRELOAD=ok.{step}\nPRELOAD=bad[\n", "user.conf", user, err, sizeof(err)),
         SCR_SUCCESS, "user layer parses");
  is_int(scr_param_init(user, NULL, NULL), SCR_SUCCESS, "param module initialised");
  scr_preload_ruleset* set = NULL;
  is_int(scr_preload_rules_compile(scr_param_get_descriptors("PRELOAD"), PREFIX, &set, err, sizeof(err)),
         SCR_ERR_CONFIG, "merged descriptors: the bad rule is an error");
  if (!ok(strstr(err, "user.conf:3: key PRELOAD: pattern 'bad['") != NULL, "merged descriptors: origin from the param module"))
    printf("#   message '%s'\n", err);
  scr_param_finalize();
  scr_kvtree_delete(&user);
}

static void test_directories(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=ckpt.{step}/rank_{rank}.dat\n");
  scr_preload_match m;
  is_int(directory(set, PREFIX, &m), 0, "the rule's literal directory is a rule directory");
  is_int(m.step, -1, "the literal directory has no step");
  is_int(directory(set, PREFIX "/ckpt.5", &m), 0, "a dataset directory is a rule directory");
  is_int(m.step, 5, "the dataset directory gives its step");
  is_int(directory(set, PREFIX "/ckpt.x", NULL), -1, "ckpt.x is not");
  is_int(directory(set, PREFIX "/ckpt.5/sub", NULL), -1, "a subdirectory of the dataset directory is not");
  is_int(directory(set, PREFIX "/ckpt.5/rank_1.dat", NULL), -1, "a file name of the rule is not");
  is_int(directory(set, "/p", NULL), -1, "the parent of the prefix is not");
  is_int(directory(set, "/", NULL), -1, "the root is not");
  is_int(directory(set, PREFIX "/other", NULL), -1, "another directory under the prefix is not");
  is_int(directory(set, PREFIX "/ck", NULL), -1, "a partial name is not");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=ckpt/{step}/x.dat\nPRELOAD=data/**/s.h5\nPRELOAD=/x.{step}\n");
  is_int(directory(set, PREFIX, NULL), -1, "prefix is not a rule directory of ckpt/{step}/x");
  is_int(directory(set, PREFIX "/ckpt", NULL), 0, "the literal directory ckpt is");
  is_int(directory(set, PREFIX "/ckpt/3", &m), 0, "ckpt/3 is");
  is_int(m.step, 3, "ckpt/3 gives step 3");
  is_int(directory(set, PREFIX "/data/a/b", NULL), 1, "any directory below ** is");
  is_int(directory(set, "/", NULL), 2, "the root for an absolute pattern in it");
  scr_preload_rules_free(&set);

  /* found by t/fuzz/fuzz-rules: ** tried chk_1.2 as the rule's file name
   * first, and its digits stayed captured when ** then took the whole
   * directory */
  set = compile("PRELOAD=dumps/**/chk_{step}.{rank}\n");
  is_int(directory(set, PREFIX "/dumps/a/chk_1.2", &m), 0, "a directory below ** named like the rule's files");
  ok(m.step == -1 && m.step_length == 0, "it has no step (a failed way captured none)");
  ok(m.rank == -1 && m.rank_length == 0, "it has no rank (a failed way captured none)");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=snap*_x/{rank}\n");
  is_int(directory(set, PREFIX "/snapab_x", NULL), 0, "* then a literal: a matching directory");
  is_int(directory(set, PREFIX "/snap_x_x", NULL), 0, "* then a literal: the literal's byte inside the star");
  is_int(directory(set, PREFIX "/snap", NULL), -1, "* then a literal: the literal is still missing");
  is_int(match(set, PREFIX "/snap_y_x/3", NULL), 0, "* then a literal: a file below");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=ckpt.latest\n");
  is_int(directory(set, PREFIX, NULL), 0, "the directory of a literal file");
  is_int(directory(set, PREFIX "/ckpt.latest", NULL), -1, "the literal file itself is not a directory");
  scr_preload_rules_free(&set);
}

static int name(const scr_preload_ruleset* set, const char* file)
{
  return scr_preload_rules_match_name(set, file, strlen(file));
}

static void test_names(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=ckpt.latest\n"
                                     "PRELOAD=data/**/s.{step}\nPRELOAD=ck*/{rank}\n");
  is_int(name(set, "rank_3.dat"), 1, "name: the last component of a rule");
  is_int(name(set, "rank_x.dat"), 0, "name: a placeholder still wants digits");
  is_int(name(set, "rank_3.da"), 0, "name: the literal end counts");
  is_int(name(set, "ckpt.latest"), 1, "name: a literal rule");
  is_int(name(set, "s.5"), 1, "name: the component after **/");
  is_int(name(set, "17"), 1, "name: a component that is only a placeholder");
  is_int(name(set, "input.dat"), 0, "name: no rule has it");
  scr_preload_rules_free(&set);
  set = compile("PRELOAD=logs/**\n");
  is_int(name(set, "anything"), 1, "name: a trailing ** can end in any name");
  scr_preload_rules_free(&set);
  is_int(name(NULL, "x"), 0, "name: no rule set, no match");
}

static int exclude(const scr_preload_ruleset* set, const char* path)
{
  const char* slash = strrchr(path, '/');
  return scr_preload_rules_exclude(set, path, strlen(path), slash ? (size_t) (slash - path) + 1 : 0);
}

static int may(const scr_preload_ruleset* set, const char* file)
{
  return scr_preload_rules_name_may_match(set, file, strlen(file));
}

/* the screens of the pass-through path never rule out what the matchers
 * accept: checked on every combination of a few path pieces */
static void test_screens(void)
{
  scr_preload_ruleset* set = compile("PRELOAD=ckpt.{step}/rank_{rank}.dat CALLER=write_*\n"
                                     "PRELOAD=ckpt.{step}/*.dat\nPRELOAD=ckpt.latest\n");
  scr_preload_match m;
  is_int(scr_preload_rules_match_from(set, 0, PREFIX "/ckpt.2/rank_1.dat", strlen(PREFIX "/ckpt.2/rank_1.dat"), &m),
         0, "match_from 0: the first rule");
  is_int(scr_preload_rules_match_from(set, 1, PREFIX "/ckpt.2/rank_1.dat", strlen(PREFIX "/ckpt.2/rank_1.dat"), &m),
         1, "match_from 1: the next rule that matches");
  is_int(m.step, 2, "match_from: captures of that rule");
  is_int(scr_preload_rules_match_from(set, 2, PREFIX "/ckpt.2/rank_1.dat", strlen(PREFIX "/ckpt.2/rank_1.dat"), &m),
         -1, "match_from past the last that matches");
  scr_preload_rules_free(&set);

  set = compile("PRELOAD=ckpt.{step}/rank_{rank}.dat\nPRELOAD=ckpt.{step}/meta.json\nPRELOAD=ckpt.latest\n"
                "PRELOAD=out/field_{step}_{rank}.h5\nPRELOAD=restart/{step}/r{rank}.bin\n"
                "PRELOAD=state.{step}.[0-9][0-9]*.ckpt\nPRELOAD=dumps/**/chk_{step}.{rank}\n"
                "PRELOAD=ckpt.{step}/rank_{rank}.?\nPRELOAD=snap_{step}/*.bin\n");
  is_int(exclude(set, "/etc/passwd"), SCR_PRELOAD_EXCLUDE_ALL, "screen: a system file is nothing of the rules");
  is_int(exclude(set, "/p"), SCR_PRELOAD_EXCLUDE_ALL, "screen: the prefix's parent is nothing of the rules");
  is_int(exclude(set, PREFIX), SCR_PRELOAD_EXCLUDE_FILE, "screen: the prefix may be a rule directory");
  is_int(exclude(set, PREFIX "/data/input.dat"), SCR_PRELOAD_EXCLUDE_FILE, "screen: an input under the prefix");
  is_int(exclude(set, PREFIX "/ckpt.1/rank_2.dat"), SCR_PRELOAD_EXCLUDE_NONE, "screen: a rule's file");
  is_int(may(set, "input.dat"), 0, "name filter: no rule's name");
  is_int(may(set, "rank_2.dat"), 1, "name filter: a rule's name");
  is_int(may(set, "x.bin"), 1, "name filter: a name that only a wildcard rule has");
  is_int(may(set, ".."), 1, "name filter: '..' may be anything");
  is_int(may(set, "a"), 1, "name filter: a name too short to filter");

  static const char* const dirs[] = { "", "/ckpt.7", "/ckpt.x", "/dumps", "/dumps/a/b", "/restart/12", "/snap_3",
                                      "/out", "/data", "/state.1.22.ckpt" };
  static const char* const names[] = { "rank_1.dat", "rank_1.da", "rank_1.x", "meta.json", "ckpt.latest", "chk_5.3",
                                       "field_1_2.h5", "r7.bin", "x.bin", "state.1.22.ckpt", "input.dat", "ckpt.7",
                                       "rank_", "chk_5.", "z" };
  int unsound = 0;
  for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
    for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
      char path[256];
      snprintf(path, sizeof(path), "%s%s/%s", PREFIX, dirs[d], names[n]);
      int screen = exclude(set, path);
      if (match(set, path, NULL) >= 0 && screen != SCR_PRELOAD_EXCLUDE_NONE) unsound++, printf("# file %s\n", path);
      if (directory(set, path, NULL) >= 0 && screen == SCR_PRELOAD_EXCLUDE_ALL) unsound++, printf("# dir %s\n", path);
      if (name(set, names[n]) && !may(set, names[n])) unsound++, printf("# name %s\n", names[n]);
    }
    char path[256];
    snprintf(path, sizeof(path), "%s%s", PREFIX, dirs[d]);
    if (directory(set, path, NULL) >= 0 && exclude(set, path) == SCR_PRELOAD_EXCLUDE_ALL)
      unsound++, printf("# dir %s\n", path);
  }
  is_int(unsound, 0, "screens never rule out a file or a directory that matches");
  scr_preload_rules_free(&set);
}

int main(void)
{
  test_literal_and_wildcards();
  test_placeholders();
  test_prefixes_and_order();
  test_attributes();
  test_errors();
  test_directories();
  test_names();
  test_screens();
  return tap_done();
}
