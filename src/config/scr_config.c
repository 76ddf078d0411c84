/* scr_config.c - reads SCR configuration text (KEY=VALUE lines and descriptors)
 * into key-value trees, checking every key and value against the parameter table. */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scr_error.h"
#include "scr_config.h"
#include "scr_param_table.h"

/* where messages point and where errors go */
typedef struct {
  const char* where;   /* "FILE:LINE", or the origin for one-line text */
  char* errbuf;
  size_t errlen;
} config_ctx;

/* growable string for values, which have no length limit */
typedef struct {
  char* data;
  size_t len, cap;
} config_buf;

typedef struct {
  char* key;     /* upper-cased */
  char* value;   /* quotes, escapes and $VAR resolved */
} config_pair;

typedef struct {
  config_pair* pairs;
  int count, cap;
} config_line;

static int config_fail(config_ctx* ctx, const char* key, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* one line of text: "WHERE: key KEY: what is wrong" */
static int config_fail(config_ctx* ctx, const char* key, const char* fmt, ...)
{
  if (ctx->errbuf && ctx->errlen > 0) {
    int n = snprintf(ctx->errbuf, ctx->errlen, "%s: key %s: ", ctx->where, key);
    if (n >= 0 && (size_t) n < ctx->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(ctx->errbuf + n, ctx->errlen - (size_t) n, fmt, ap);
      va_end(ap);
    }
  }
  return SCR_ERR_CONFIG;
}

static int buf_putn(config_buf* buf, const char* s, size_t n)
{
  if (buf->len + n + 1 > buf->cap) {
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < buf->len + n + 1) cap *= 2;
    char* data = realloc(buf->data, cap);
    if (!data) return SCR_ERR_NOMEM;
    buf->data = data;
    buf->cap = cap;
  }
  memcpy(buf->data + buf->len, s, n);
  buf->len += n;
  buf->data[buf->len] = '\0';
  return SCR_SUCCESS;
}

static void line_free(config_line* line)
{
  for (int i = 0; i < line->count; i++) {
    free(line->pairs[i].key);
    free(line->pairs[i].value);
  }
  free(line->pairs);
  memset(line, 0, sizeof(*line));
}

static int line_add(config_line* line, char* key, char* value)
{
  if (line->count == line->cap) {
    int cap = line->cap ? 2 * line->cap : 8;
    config_pair* pairs = realloc(line->pairs, (size_t) cap * sizeof(*pairs));
    if (!pairs) return SCR_ERR_NOMEM;
    line->pairs = pairs;
    line->cap = cap;
  }
  line->pairs[line->count].key = key;
  line->pairs[line->count].value = value;
  line->count++;
  return SCR_SUCCESS;
}

static int is_name_start(char c)
{
  return isalpha((unsigned char) c) || c == '_';
}

static int is_name_char(char c)
{
  return isalnum((unsigned char) c) || c == '_';
}

static int is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* "what is wrong" about the pair being read: the first pair names the line,
 * later ones are attributes of it */
static const char* line_label(const config_line* line, const char* key)
{
  return line->count > 0 ? line->pairs[0].key : key;
}

/* $NAME or ${NAME} at *p (pointing at '$'); appends the variable's value.
 * A '$' not followed by a name is kept, as in the shell. */
static int value_interpolate(config_ctx* ctx, const char* label, const char** p, config_buf* out)
{
  const char* s = *p + 1;
  char name[256];
  size_t n = 0;
  if (*s == '{') {
    s++;
    while (*s && *s != '}') {
      if (!is_name_char(*s) || n + 1 >= sizeof(name))
        return config_fail(ctx, label, "invalid variable name in ${...}");
      name[n++] = *s++;
    }
    if (*s != '}') return config_fail(ctx, label, "unterminated ${ in value");
    if (n == 0) return config_fail(ctx, label, "empty variable name in ${}");
    s++;
  } else if (is_name_start(*s)) {
    while (is_name_char(*s) && n + 1 < sizeof(name)) name[n++] = *s++;
  } else {
    *p = s;
    return buf_putn(out, "$", 1);
  }
  name[n] = '\0';
  const char* value = getenv(name);
  if (!value) return config_fail(ctx, label, "environment variable %s is not set", name);
  *p = s;
  return buf_putn(out, value, strlen(value));
}

/* the value after '=': runs to an unquoted blank or '#'; double quotes may
 * enclose blanks, '#' and '='; a backslash protects $ " \ and # */
static int value_scan(config_ctx* ctx, const char* label, int spaced, const char** p, char** value)
{
  config_buf out = { NULL, 0, 0 };
  const char* s = *p;
  int quoted = 0, rc = SCR_SUCCESS;
  while (rc == SCR_SUCCESS && *s && (quoted || (!is_blank(*s) && *s != '#'))) {
    if (*s == '"') {
      quoted = !quoted;
      s++;
      rc = buf_putn(&out, "", 0);
    } else if (*s == '\\' && s[1] && strchr("$\"\\#", s[1])) {
      rc = buf_putn(&out, s + 1, 1);
      s += 2;
    } else if (*s == '$') {
      rc = value_interpolate(ctx, label, &s, &out);
    } else if (*s == '=' && !quoted) {
      /* "KEY= OTHER=x" is a forgotten value, not a value containing '=' */
      rc = spaced ? config_fail(ctx, label, "missing value after '='")
                  : config_fail(ctx, label, "'=' inside a value must be within double quotes");
    } else {
      rc = buf_putn(&out, s, 1);
      s++;
    }
  }
  if (rc == SCR_SUCCESS && quoted) rc = config_fail(ctx, label, "unterminated double quote in value");
  if (rc == SCR_SUCCESS && out.len == 0) rc = config_fail(ctx, label, "empty value");
  if (rc != SCR_SUCCESS) {
    free(out.data);
    return rc;
  }
  *p = s;
  *value = out.data;
  return SCR_SUCCESS;
}

/* split text into KEY=VALUE pairs; a blank or comment line gives none */
static int line_split(config_ctx* ctx, const char* text, config_line* line)
{
  const char* p = text;
  for (;;) {
    while (is_blank(*p)) p++;
    if (*p == '\0' || *p == '#') return SCR_SUCCESS;

    const char* start = p;
    while (*p && !is_blank(*p) && *p != '=' && *p != '#' && *p != '"') p++;
    size_t len = (size_t) (p - start);
    char key[128];
    if (len == 0) {
      return config_fail(ctx, line->count ? line->pairs[0].key : "(none)",
                         "expected a name before '%c'", *p);
    }
    if (len >= sizeof(key)) len = sizeof(key) - 1;
    for (size_t i = 0; i < len; i++) key[i] = (char) toupper((unsigned char) start[i]);
    key[len] = '\0';
    const char* label = line_label(line, key);

    int valid = is_name_start(key[0]);
    for (size_t i = 1; valid && i < len; i++) valid = is_name_char(key[i]);
    if (!valid) {
      if (line->count) return config_fail(ctx, label, "attribute %s is not a valid name (letters, digits and '_')", key);
      return config_fail(ctx, key, "not a valid parameter name (letters, digits and '_')");
    }

    while (is_blank(*p)) p++;
    if (*p != '=') {
      if (line->count) return config_fail(ctx, label, "attribute %s has no '='; attributes are NAME=VALUE", key);
      return config_fail(ctx, key, "no '=' after the key; lines are KEY=VALUE");
    }
    p++;
    int spaced = is_blank(*p);
    while (is_blank(*p)) p++;
    if (*p == '\0' || *p == '#') {
      if (line->count) return config_fail(ctx, label, "attribute %s: missing value after '='", key);
      return config_fail(ctx, key, "missing value after '='");
    }

    char* value = NULL;
    char what[300];
    if (line->count) snprintf(what, sizeof(what), "%s: attribute %s", label, key);
    else snprintf(what, sizeof(what), "%s", key);
    int rc = value_scan(ctx, what, spaced, &p, &value);
    if (rc != SCR_SUCCESS) return rc;

    char* key_copy = strdup(key);
    if (!key_copy || line_add(line, key_copy, value) != SCR_SUCCESS) {
      free(key_copy);
      free(value);
      return SCR_ERR_NOMEM;
    }
  }
}

/* check an attribute of a descriptor line; returns its stored spelling in *stored */
static int attr_check(config_ctx* ctx, const scr_param_def* def, const config_line* line,
                      int index, const char** stored)
{
  const config_pair* pair = &line->pairs[index];
  const scr_param_attr* attr = scr_param_table_find_attr(def, pair->key);
  if (!attr) {
    const char* hint = scr_param_table_suggest_attr(def, pair->key);
    if (hint) return config_fail(ctx, def->name, "unknown attribute %s; did you mean %s?", pair->key, hint);
    char known[512] = "";
    size_t n = 0;
    for (const scr_param_attr* a = def->attrs; a && a->name && n < sizeof(known); a++) {
      n += (size_t) snprintf(known + n, sizeof(known) - n, "%s%s", n ? ", " : "", a->name);
    }
    return config_fail(ctx, def->name, "unknown attribute %s (%s takes %s)", pair->key, def->name, known);
  }
  for (int j = 1; j < index; j++) {
    if (strcmp(line->pairs[j].key, pair->key) == 0)
      return config_fail(ctx, def->name, "attribute %s given twice", pair->key);
  }
  char why[512];
  const char* canonical = NULL;
  if (scr_param_check_value(attr->type, attr->choices, attr->min, attr->max, pair->value,
                            &canonical, why, sizeof(why)) != SCR_SUCCESS) {
    return config_fail(ctx, def->name, "attribute %s: %s", pair->key, why);
  }
  *stored = canonical ? canonical : pair->value;
  return SCR_SUCCESS;
}

/* validate one split line against the table and record it in tree */
static int line_apply(config_ctx* ctx, const config_line* line, scr_kvtree* tree)
{
  const config_pair* head = &line->pairs[0];
  const scr_param_def* def = scr_param_table_find(head->key);
  if (!def) {
    const char* hint = scr_param_table_suggest(head->key);
    if (hint) return config_fail(ctx, head->key, "unknown parameter; did you mean %s?", hint);
    return config_fail(ctx, head->key, "unknown parameter (scrconf(5) lists them all)");
  }

  char why[512];
  const char* canonical = NULL;
  if (def->type != SCR_PARAM_DESCRIPTOR) {
    if (line->count > 1) {
      return config_fail(ctx, head->key, "takes a single value, but %s=%s follows; put each parameter on its own line",
                         line->pairs[1].key, line->pairs[1].value);
    }
    if (scr_param_check_value(def->type, def->choices, def->min, def->max, head->value,
                              &canonical, why, sizeof(why)) != SCR_SUCCESS) {
      return config_fail(ctx, head->key, "%s", why);
    }
    /* a repeated simple key replaces the earlier value: last one wins */
    scr_kvtree* value = scr_kvtree_set_kv(tree, def->name, canonical ? canonical : head->value);
    if (!value || !scr_kvtree_set_kv(value, "@ORIGIN", ctx->where)) return SCR_ERR_NOMEM;
    return SCR_SUCCESS;
  }

  if (scr_param_check_value(def->value_type, NULL, def->min, def->max, head->value,
                            NULL, why, sizeof(why)) != SCR_SUCCESS) {
    return config_fail(ctx, head->key, "%s", why);
  }
  const char* stored[line->count];
  for (int i = 1; i < line->count; i++) {
    int rc = attr_check(ctx, def, line, i, &stored[i]);
    if (rc != SCR_SUCCESS) return rc;
  }

  /* CKPT=01 and CKPT=1 name the same descriptor */
  char number[32];
  const char* name = head->value;
  long long n;
  if (def->value_type == SCR_PARAM_INT && scr_param_parse_int(head->value, &n) == SCR_SUCCESS) {
    snprintf(number, sizeof(number), "%lld", n);
    name = number;
  }
  /* the same descriptor on a later line adds to and overrides its attributes */
  scr_kvtree* desc = scr_kvtree_add_kv(tree, def->name, name);
  if (!desc) return SCR_ERR_NOMEM;
  for (int i = 1; i < line->count; i++) {
    if (!scr_kvtree_set_kv(desc, line->pairs[i].key, stored[i])) return SCR_ERR_NOMEM;
  }
  if (!scr_kvtree_set_kv(desc, "@ORIGIN", ctx->where)) return SCR_ERR_NOMEM;
  return SCR_SUCCESS;
}

static int text_line_apply(config_ctx* ctx, const char* text, scr_kvtree* tree)
{
  config_line line = { NULL, 0, 0 };
  int rc = line_split(ctx, text, &line);
  if (rc == SCR_SUCCESS && line.count > 0) rc = line_apply(ctx, &line, tree);
  line_free(&line);
  if (rc == SCR_ERR_NOMEM && ctx->errbuf && ctx->errlen)
    snprintf(ctx->errbuf, ctx->errlen, "%s: out of memory while reading the configuration", ctx->where);
  return rc;
}

/* swap the parsed result into settings only when the whole text was good */
static void settings_replace(scr_kvtree* settings, scr_kvtree* parsed)
{
  scr_kvtree_clear(settings);
  scr_kvtree_merge(settings, parsed);
}

int scr_config_read_file(const char* path, scr_kvtree* settings, char* errbuf, size_t errlen)
{
  if (errbuf && errlen) errbuf[0] = '\0';
  if (!path || !settings) return SCR_ERR_INVALID;
  FILE* file = fopen(path, "r");
  if (!file) {
    if (errno == ENOENT) return SCR_ERR_NOENT;
    if (errbuf) snprintf(errbuf, errlen, "%s: cannot open configuration file: %s", path, strerror(errno));
    return SCR_ERR_IO;
  }

  scr_kvtree* work = scr_kvtree_copy(settings);
  if (!work) {
    fclose(file);
    return SCR_ERR_NOMEM;
  }
  char* text = NULL;
  size_t cap = 0;
  ssize_t len;
  long number = 0;
  int rc = SCR_SUCCESS;
  size_t where_len = strlen(path) + 32;
  char* where = malloc(where_len);
  if (!where) rc = SCR_ERR_NOMEM;
  while (rc == SCR_SUCCESS && (len = getline(&text, &cap, file)) >= 0) {
    number++;
    if (len > 0 && text[len - 1] == '\n') text[--len] = '\0';
    char* start = text;
    if (number == 1 && strncmp(start, "\xEF\xBB\xBF", 3) == 0) start += 3;  /* UTF-8 mark */
    snprintf(where, where_len, "%s:%ld", path, number);
    config_ctx ctx = { where, errbuf, errlen };
    rc = text_line_apply(&ctx, start, work);
  }
  if (rc == SCR_SUCCESS && ferror(file)) {
    if (errbuf) snprintf(errbuf, errlen, "%s: cannot read configuration file: %s", path, strerror(errno));
    rc = SCR_ERR_IO;
  }
  fclose(file);
  free(text);
  free(where);
  if (rc == SCR_SUCCESS) settings_replace(settings, work);
  scr_kvtree_delete(&work);
  return rc;
}

int scr_config_parse_string(const char* text, const char* origin,
                            scr_kvtree* settings, char* errbuf, size_t errlen)
{
  if (errbuf && errlen) errbuf[0] = '\0';
  if (!text || !settings) return SCR_ERR_INVALID;
  if (!origin) origin = "configuration";
  /* a single line (an SCR_Config call) is named by its origin alone */
  int numbered = strchr(text, '\n') != NULL && text[strcspn(text, "\n") + 1] != '\0';

  scr_kvtree* work = scr_kvtree_copy(settings);
  size_t where_len = strlen(origin) + 32;
  char* where = malloc(where_len);
  char* copy = strdup(text);
  int rc = (work && where && copy) ? SCR_SUCCESS : SCR_ERR_NOMEM;
  char* line = copy;
  long number = 0;
  while (rc == SCR_SUCCESS && line) {
    char* next = strchr(line, '\n');
    if (next) *next++ = '\0';
    number++;
    if (numbered) snprintf(where, where_len, "%s:%ld", origin, number);
    else snprintf(where, where_len, "%s", origin);
    config_ctx ctx = { where, errbuf, errlen };
    rc = text_line_apply(&ctx, line, work);
    line = (next && *next) ? next : NULL;
  }
  if (rc == SCR_SUCCESS) settings_replace(settings, work);
  scr_kvtree_delete(&work);
  free(where);
  free(copy);
  return rc;
}
