/* scr_param.c - answers "what is the value of SCR_X and who set it" over the
 * layers environment > user file > SCR_Config > system file > default. */
#include "config.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_config.h"
#include "scr_param.h"

#ifndef SCR_CONFIG_FILE
#define SCR_CONFIG_FILE "/etc/scr.conf"
#endif

extern char** environ;

/* file and app layers in the order they are consulted after the environment */
enum { LAYER_USER, LAYER_APP, LAYER_SYSTEM, LAYER_COUNT };
static const char* const layer_names[LAYER_COUNT] = {
  "user configuration file", "SCR_Config", "system configuration file"
};

static scr_kvtree* layers[LAYER_COUNT];  /* copies taken by scr_param_init */
static int initialised = 0;
static scr_kvtree* app_live = NULL;      /* what SCR_Config has set so far */
static scr_kvtree* env_strings = NULL;   /* environment values handed out, kept alive */
static scr_kvtree* merged = NULL;        /* descriptors merged over layers, by name */
static scr_kvtree* merged_origins = NULL;

typedef struct {
  const char* value;
  const char* origin;
  int is_default;
} param_hit;

/* before scr_param_init the SCR_Config layer is the live one, so that
 * SCR_Config("SCR_FLUSH") answers before SCR_Init as LLNL SCR does */
static const scr_kvtree* layer_tree(int layer)
{
  if (initialised) return layers[layer];
  return layer == LAYER_APP ? app_live : NULL;
}

static void merged_forget(void)
{
  scr_kvtree_delete(&merged);
  scr_kvtree_delete(&merged_origins);
}

/* an alias (SCR_USER_NAME) is looked up as the parameter it stands for */
static const scr_param_def* param_resolve(const char* name)
{
  const scr_param_def* def = scr_param_table_find(name);
  if (def && def->alias_of) def = scr_param_table_find(def->alias_of);
  return def;
}

/* keep an environment value alive until finalize, since getenv's pointer
 * changes when the application calls setenv */
static const char* env_intern(const char* name, const char* value)
{
  if (!env_strings && !(env_strings = scr_kvtree_new())) return NULL;
  scr_kvtree* values = scr_kvtree_get_or_create(env_strings, name);
  if (!values) return NULL;
  if (!scr_kvtree_get(values, value)) scr_kvtree_set(values, value, scr_kvtree_new());
  for (scr_kvtree_elem* e = scr_kvtree_first(values); e; e = scr_kvtree_next(e)) {
    if (strcmp(scr_kvtree_elem_key(e), value) == 0) return scr_kvtree_elem_key(e);
  }
  return NULL;
}

/* value of one spelling of a parameter in one layer */
static int layer_value(const scr_kvtree* tree, int layer, const char* name, param_hit* hit)
{
  scr_kvtree_elem* e = scr_kvtree_first(scr_kvtree_get(tree, name));
  if (!e) return 0;
  hit->value = scr_kvtree_elem_key(e);
  hit->origin = scr_kvtree_get_val(scr_kvtree_elem_tree(e), "@ORIGIN");
  if (!hit->origin) hit->origin = layer_names[layer];
  hit->is_default = 0;
  return 1;
}

/* the winning value of a simple parameter; 0 when nothing sets it */
static int param_lookup(const scr_param_def* def, param_hit* hit)
{
  /* the parameter's own name first, then LLNL spellings of it */
  const char* names[4] = { def->name, NULL, NULL, NULL };
  int count = 1;
  for (int i = 0; i < scr_param_table_size() && count < 4; i++) {
    const scr_param_def* other = scr_param_table_at(i);
    if (other->alias_of && strcmp(other->alias_of, def->name) == 0) names[count++] = other->name;
  }

  for (int i = 0; i < count; i++) {
    const char* env = getenv(names[i]);
    if (env && *env) {
      hit->value = env_intern(names[i], env);
      hit->origin = "environment";
      hit->is_default = 0;
      if (hit->value) return 1;
    }
  }
  for (int layer = 0; layer < LAYER_COUNT; layer++) {
    const scr_kvtree* tree = layer_tree(layer);
    for (int i = 0; tree && i < count; i++) {
      if (layer_value(tree, layer, names[i], hit)) return 1;
    }
  }
  if (def->default_value) {
    hit->value = def->default_value;
    hit->origin = "default";
    hit->is_default = 1;
    return 1;
  }
  return 0;
}

int scr_param_init(const scr_kvtree* user, const scr_kvtree* app, const scr_kvtree* system)
{
  const scr_kvtree* given[LAYER_COUNT] = { user, app, system };
  scr_kvtree* copies[LAYER_COUNT] = { NULL, NULL, NULL };
  for (int i = 0; i < LAYER_COUNT; i++) {
    copies[i] = given[i] ? scr_kvtree_copy(given[i]) : scr_kvtree_new();
    if (!copies[i]) {
      for (int j = 0; j < i; j++) scr_kvtree_delete(&copies[j]);
      scr_err("cannot initialise configuration parameters: out of memory");
      return SCR_ERR_NOMEM;
    }
  }
  for (int i = 0; i < LAYER_COUNT; i++) {
    scr_kvtree_delete(&layers[i]);
    layers[i] = copies[i];
  }
  merged_forget();
  initialised = 1;
  return SCR_SUCCESS;
}

void scr_param_finalize(void)
{
  for (int i = 0; i < LAYER_COUNT; i++) scr_kvtree_delete(&layers[i]);
  scr_kvtree_delete(&app_live);
  scr_kvtree_delete(&env_strings);
  merged_forget();
  initialised = 0;
}

const char* scr_param_get(const char* name)
{
  const scr_param_def* def = param_resolve(name);
  if (!def) {
    scr_err("internal error: configuration parameter %s is not in the parameter table",
            name ? name : "(null)");
    return NULL;
  }
  param_hit hit;
  if (def->type == SCR_PARAM_DESCRIPTOR || !param_lookup(def, &hit)) return NULL;
  /* choices come back in the table's spelling, so callers may use strcmp */
  if (def->type == SCR_PARAM_ENUM) {
    const char* canonical = NULL;
    char why[256];
    scr_param_check_value(def->type, def->choices, def->min, def->max, hit.value,
                          &canonical, why, sizeof(why));
    if (canonical) return canonical;
  }
  return hit.value;
}

const char* scr_param_origin(const char* name)
{
  const scr_param_def* def = param_resolve(name);
  param_hit hit;
  if (!def || def->type == SCR_PARAM_DESCRIPTOR || !param_lookup(def, &hit)) return NULL;
  return hit.origin;
}

/* value and range check shared by the typed getters; logs what is wrong */
static int typed_lookup(const char* name, scr_param_type type, const char** value)
{
  const scr_param_def* def = param_resolve(name);
  param_hit hit;
  if (!def) {
    scr_err("internal error: configuration parameter %s is not in the parameter table",
            name ? name : "(null)");
    return SCR_ERR_INVALID;
  }
  if (def->type == SCR_PARAM_DESCRIPTOR || !param_lookup(def, &hit)) return SCR_ERR_NOENT;
  long long min = def->type == type ? def->min : 1, max = def->type == type ? def->max : 0;
  char why[512];
  if (scr_param_check_value(type, def->choices, min, max, hit.value, NULL, why, sizeof(why)) != SCR_SUCCESS) {
    if (strcmp(hit.origin, "environment") == 0)
      scr_err("environment variable %s: %s; fix or unset it", def->name, why);
    else
      scr_err("%s: key %s: %s", hit.origin, def->name, why);
    return SCR_ERR_CONFIG;
  }
  *value = hit.value;
  return SCR_SUCCESS;
}

int scr_param_get_int(const char* name, long long* value)
{
  const char* text = NULL;
  int rc = typed_lookup(name, SCR_PARAM_INT, &text);
  return rc == SCR_SUCCESS ? scr_param_parse_int(text, value) : rc;
}

int scr_param_get_bytes(const char* name, unsigned long long* value)
{
  const char* text = NULL;
  int rc = typed_lookup(name, SCR_PARAM_BYTES, &text);
  return rc == SCR_SUCCESS ? scr_param_parse_bytes(text, value) : rc;
}

int scr_param_get_double(const char* name, double* value)
{
  const char* text = NULL;
  int rc = typed_lookup(name, SCR_PARAM_DOUBLE, &text);
  return rc == SCR_SUCCESS ? scr_param_parse_double(text, value) : rc;
}

int scr_param_get_bool(const char* name, int* value)
{
  const char* text = NULL;
  int rc = typed_lookup(name, SCR_PARAM_BOOL, &text);
  return rc == SCR_SUCCESS ? scr_param_parse_bool(text, value) : rc;
}

/* merge one descriptor kind over the layers, lowest first, so that a higher
 * layer's descriptor replaces a lower one with the same value */
static scr_kvtree* descriptors_merge(const scr_param_def* def, scr_kvtree* origins)
{
  scr_kvtree* result = scr_kvtree_new();
  if (!result) return NULL;
  for (int layer = LAYER_COUNT - 1; layer >= 0; layer--) {
    scr_kvtree* kind = scr_kvtree_get(layer_tree(layer), def->name);
    for (scr_kvtree_elem* e = scr_kvtree_first(kind); e; e = scr_kvtree_next(e)) {
      scr_kvtree* copy = scr_kvtree_copy(scr_kvtree_elem_tree(e));
      if (!copy) continue;
      const char* origin = scr_kvtree_get_val(copy, "@ORIGIN");
      scr_kvtree_set_kv(origins, scr_kvtree_elem_key(e), origin ? origin : layer_names[layer]);
      scr_kvtree_unset(copy, "@ORIGIN");
      scr_kvtree_set(result, scr_kvtree_elem_key(e), copy);
    }
  }
  return result;
}

const scr_kvtree* scr_param_get_descriptors(const char* name)
{
  const scr_param_def* def = scr_param_table_find(name);
  if (!def || def->type != SCR_PARAM_DESCRIPTOR) return NULL;
  if (!merged) merged = scr_kvtree_new();
  if (!merged_origins) merged_origins = scr_kvtree_new();
  if (!merged || !merged_origins) return NULL;
  scr_kvtree* result = scr_kvtree_get(merged, def->name);
  if (!result) {
    scr_kvtree* origins = scr_kvtree_set(merged_origins, def->name, scr_kvtree_new());
    result = origins ? descriptors_merge(def, origins) : NULL;
    if (!result) return NULL;
    scr_kvtree_set(merged, def->name, result);
  }
  return scr_kvtree_size(result) > 0 ? result : NULL;
}

/* descriptor values that are numbers are stored without sign or leading zeros */
static void descriptor_key(const scr_param_def* def, const char* value, char* buf, size_t len)
{
  long long n;
  if (def->value_type == SCR_PARAM_INT && scr_param_parse_int(value, &n) == SCR_SUCCESS)
    snprintf(buf, len, "%lld", n);
  else
    snprintf(buf, len, "%s", value);
}

const char* scr_param_descriptor_origin(const char* name, const char* value)
{
  const scr_param_def* def = scr_param_table_find(name);
  if (!def || !value || !scr_param_get_descriptors(def->name)) return NULL;
  char key[4096];
  descriptor_key(def, value, key, sizeof(key));
  return scr_kvtree_get_val(scr_kvtree_get(merged_origins, def->name), key);
}

/* --- the SCR_Config layer --- */

const scr_kvtree* scr_param_app_tree(void)
{
  if (!app_live) app_live = scr_kvtree_new();
  return app_live;
}

static char* text_trim(const char* text)
{
  while (isspace((unsigned char) *text)) text++;
  char* copy = strdup(text);
  if (!copy) return NULL;
  size_t n = strlen(copy);
  while (n > 0 && isspace((unsigned char) copy[n - 1])) copy[--n] = '\0';
  return copy;
}

static void upcase(char* s)
{
  for (; *s; s++) *s = (char) toupper((unsigned char) *s);
}

static int unknown_key(const char* key)
{
  const char* hint = scr_param_table_suggest(key);
  if (hint) scr_err("SCR_Config: key %s: unknown parameter; did you mean %s?", key, hint);
  else scr_err("SCR_Config: key %s: unknown parameter (scrconf(5) lists them all)", key);
  return SCR_ERR_CONFIG;
}

/* "KEY=" unsets a simple parameter or every descriptor KEY set by SCR_Config;
 * "DESC=VALUE ... ATTR=" sets what precedes and removes ATTR from that descriptor */
static int app_unset(const char* prefix, char* name)
{
  upcase(name);
  if (*prefix == '\0') {
    const scr_param_def* def = scr_param_table_find(name);
    if (!def) return unknown_key(name);
    scr_kvtree_unset(app_live, def->name);
    return SCR_SUCCESS;
  }

  char err[1024];
  scr_kvtree* head = scr_kvtree_new();
  if (!head) return SCR_ERR_NOMEM;
  int rc = scr_config_parse_string(prefix, "SCR_Config", head, err, sizeof(err));
  scr_kvtree_elem* kind = scr_kvtree_first(head);
  const scr_param_def* def = kind ? scr_param_table_find(scr_kvtree_elem_key(kind)) : NULL;
  if (rc != SCR_SUCCESS) {
    scr_err("%s", err);
  } else if (!def || def->type != SCR_PARAM_DESCRIPTOR) {
    scr_err("SCR_Config: key %s: takes a single value; unset it alone with \"%s=\"",
            def ? def->name : prefix, def ? def->name : prefix);
    rc = SCR_ERR_CONFIG;
  } else if (!scr_param_table_find_attr(def, name)) {
    const char* hint = scr_param_table_suggest_attr(def, name);
    scr_err("SCR_Config: key %s: unknown attribute %s%s%s%s", def->name, name,
            hint ? "; did you mean " : "", hint ? hint : "", hint ? "?" : "");
    rc = SCR_ERR_CONFIG;
  } else {
    rc = scr_config_parse_string(prefix, "SCR_Config", app_live, err, sizeof(err));
    const char* value = scr_kvtree_elem_val(kind);
    scr_kvtree* desc = scr_kvtree_get_kv(app_live, def->name, value);
    if (rc == SCR_SUCCESS && desc) scr_kvtree_unset(desc, name);
  }
  scr_kvtree_delete(&head);
  return rc;
}

int scr_param_app_set(const char* config_line)
{
  if (initialised) {
    scr_err("SCR_Config(\"%s\"): parameters can only be set or unset before SCR_Init",
            config_line ? config_line : "");
    return SCR_ERR_INVALID;
  }
  if (!config_line) return SCR_ERR_INVALID;
  if (!app_live && !(app_live = scr_kvtree_new())) return SCR_ERR_NOMEM;
  char* line = text_trim(config_line);
  if (!line) return SCR_ERR_NOMEM;
  merged_forget();

  int rc;
  size_t n = strlen(line);
  if (n > 0 && line[n - 1] == '=') {
    /* find the name before the trailing '=', allowing "NAME =" */
    size_t end = n - 1;
    while (end > 0 && isspace((unsigned char) line[end - 1])) end--;
    size_t start = end;
    while (start > 0 && (isalnum((unsigned char) line[start - 1]) || line[start - 1] == '_')) start--;
    if (start == end || (start > 0 && !isspace((unsigned char) line[start - 1]))) {
      scr_err("SCR_Config(\"%s\"): expected KEY=VALUE, KEY= or a descriptor line", config_line);
      free(line);
      return SCR_ERR_CONFIG;
    }
    char* name = strndup(line + start, end - start);
    line[start] = '\0';
    char* prefix = text_trim(line);
    rc = (name && prefix) ? app_unset(prefix, name) : SCR_ERR_NOMEM;
    free(prefix);
    free(name);
  } else {
    char err[1024];
    rc = scr_config_parse_string(line, "SCR_Config", app_live, err, sizeof(err));
    if (rc != SCR_SUCCESS) scr_err("%s", err);
  }
  free(line);
  return rc;
}

char* scr_param_app_query(const char* name)
{
  if (!name) return NULL;
  char* query = text_trim(name);
  if (!query) return NULL;
  char* result = NULL;
  char* eq = strchr(query, '=');
  if (eq) {
    /* "DESC=VALUE ATTR" asks for one attribute of one descriptor */
    *eq = '\0';
    char* value = eq + 1;
    char* attr = value + strcspn(value, " \t");
    if (*attr) *attr++ = '\0';
    while (isspace((unsigned char) *attr)) attr++;
    upcase(query);
    upcase(attr);
    const scr_param_def* def = scr_param_table_find(query);
    const scr_kvtree* all = def ? scr_param_get_descriptors(def->name) : NULL;
    if (!def) {
      unknown_key(query);
    } else if (all && *value && *attr) {
      char key[4096];
      descriptor_key(def, value, key, sizeof(key));
      const char* found = scr_kvtree_get_val(scr_kvtree_get(all, key), attr);
      if (found) result = strdup(found);
    }
  } else {
    upcase(query);
    const scr_param_def* def = scr_param_table_find(query);
    if (!def) unknown_key(query);
    else if (def->type != SCR_PARAM_DESCRIPTOR) {
      const char* value = scr_param_get(def->name);
      if (value) result = strdup(value);
    }
  }
  free(query);
  return result;
}

/* --- checks and reports --- */

/* variables of this project's own tools (scr_cluster) and of the preload
 * layer (what a rank tells the processes it starts) that are not parameters
 * yet may sit close to one (SCR_CLUSTER_NAME): not worth a did-you-mean */
static int scr_param_is_tool_variable(const char* name)
{
  static const char* const names[] = { "SCR_CLUSTER_ID", "SCR_CLUSTER_JOB", "SCR_CLUSTER_MPIEXEC",
                                       "SCR_CLUSTER_NODE", "SCR_CLUSTER_STATE", "SCR_CLUSTER_TIMEOUT",
                                       "SCR_PRELOAD_PARENT" };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

int scr_param_check_environment(char* errbuf, size_t errlen)
{
  if (errbuf && errlen) errbuf[0] = '\0';
  for (char** env = environ; env && *env; env++) {
    if (strncmp(*env, "SCR_", 4) != 0) continue;
    const char* eq = strchr(*env, '=');
    if (!eq) continue;
    char name[128];
    size_t len = (size_t) (eq - *env);
    if (len >= sizeof(name)) continue;
    memcpy(name, *env, len);
    name[len] = '\0';
    const char* value = eq + 1;
    const scr_param_def* def = scr_param_table_find(name);
    if (!def || strcmp(def->name, name) != 0) {
      /* other SCR_ variables (SCR_NODELIST, test settings) are legitimate;
       * only a near miss of a real name is worth a word (our own variables
       * are known first: a search for the nearest name is not cheap, and
       * every process a rank starts checks its environment) */
      const char* hint = scr_param_is_tool_variable(name) ? NULL : scr_param_table_suggest(name);
      if (hint && strcmp(hint, name) != 0)
        scr_warn("environment variable %s is not an SCR parameter; did you mean %s?", name, hint);
      continue;
    }
    if (def->type == SCR_PARAM_DESCRIPTOR || *value == '\0') continue;
    char why[512];
    if (scr_param_check_value(def->type, def->choices, def->min, def->max, value,
                              NULL, why, sizeof(why)) != SCR_SUCCESS) {
      if (errbuf) snprintf(errbuf, errlen, "environment variable %s: %s", name, why);
      return SCR_ERR_CONFIG;
    }
  }
  return SCR_SUCCESS;
}

/* where a descriptor kind is first set, for the ineffective report */
static const char* descriptor_set_by(const scr_param_def* def)
{
  const scr_kvtree* all = scr_param_get_descriptors(def->name);
  scr_kvtree_elem* first = scr_kvtree_first(all);
  return first ? scr_param_descriptor_origin(def->name, scr_kvtree_elem_key(first)) : NULL;
}

void scr_param_report_ineffective(void)
{
  for (int i = 0; i < scr_param_table_size(); i++) {
    const scr_param_def* def = scr_param_table_at(i);
    if (def->type != SCR_PARAM_DESCRIPTOR) {
      param_hit hit;
      if (!def->effective && !def->alias_of && param_lookup(def, &hit) && !hit.is_default)
        scr_warn("%s is accepted for compatibility with LLNL SCR and has no effect here (set by %s)",
                 def->name, hit.origin);
      continue;
    }
    const char* origin = descriptor_set_by(def);
    if (!origin) continue;
    if (!def->effective) {
      scr_warn("%s is accepted for compatibility with LLNL SCR and has no effect here (set by %s)",
               def->name, origin);
      continue;
    }
    /* one line per ignored attribute, however many descriptors use it */
    for (const scr_param_attr* attr = def->attrs; attr && attr->name; attr++) {
      if (attr->effective) continue;
      const scr_kvtree* all = scr_param_get_descriptors(def->name);
      for (scr_kvtree_elem* e = scr_kvtree_first(all); e; e = scr_kvtree_next(e)) {
        if (scr_kvtree_get(scr_kvtree_elem_tree(e), attr->name)) {
          scr_warn("%s attribute %s is accepted for compatibility with LLNL SCR and has no effect here (set by %s)",
                   def->name, attr->name, scr_param_descriptor_origin(def->name, scr_kvtree_elem_key(e)));
          break;
        }
      }
    }
  }
}

/* the user file the last scr_param_read_files read, NULL for none */
static char* user_file_read = NULL;

const char* scr_param_user_file(void)
{
  return user_file_read;
}

/* path parsed into user: remembered when it was there */
static int read_user_file(const char* path, scr_kvtree* user, char* errbuf, size_t errlen)
{
  int rc = scr_config_read_file(path, user, errbuf, errlen);
  if (rc == SCR_SUCCESS) user_file_read = strdup(path);
  return rc;
}

int scr_param_read_files(scr_kvtree* user, scr_kvtree* system, char* errbuf, size_t errlen)
{
  if (errbuf && errlen) errbuf[0] = '\0';
  free(user_file_read);
  user_file_read = NULL;
  int rc = SCR_SUCCESS;
  if (system) {
    rc = scr_config_read_file(SCR_CONFIG_FILE, system, errbuf, errlen);
    if (rc == SCR_ERR_NOENT) rc = SCR_SUCCESS;
    if (rc != SCR_SUCCESS) return rc;
  }
  if (!user) return SCR_SUCCESS;

  /* SCR_CONF_FILE and SCR_PREFIX come from the environment or SCR_Config
   * here (and SCR_PREFIX also from the system file): the user file is what
   * is being looked for */
  const char* named = scr_param_get("SCR_CONF_FILE");
  if (named) {
    rc = read_user_file(named, user, errbuf, errlen);
    if (rc == SCR_ERR_NOENT && errbuf)
      snprintf(errbuf, errlen, "SCR_CONF_FILE names %s (set by %s), which does not exist",
               named, scr_param_origin("SCR_CONF_FILE"));
    return rc == SCR_ERR_NOENT ? SCR_ERR_CONFIG : rc;
  }
  const char* prefix = scr_param_get("SCR_PREFIX");
  if (!prefix && system) prefix = scr_kvtree_elem_key(scr_kvtree_first(scr_kvtree_get(system, "SCR_PREFIX")));
  char cwd[4096];
  if (!prefix) {
    if (!getcwd(cwd, sizeof(cwd))) {
      if (errbuf) snprintf(errbuf, errlen, "cannot find the current directory to look for .scrconf; set SCR_PREFIX");
      return SCR_ERR_IO;
    }
    prefix = cwd;
  }
  size_t len = strlen(prefix) + sizeof("/.scrconf");
  char* path = malloc(len);
  if (!path) return SCR_ERR_NOMEM;
  snprintf(path, len, "%s/.scrconf", prefix);
  rc = read_user_file(path, user, errbuf, errlen);
  free(path);
  return rc == SCR_ERR_NOENT ? SCR_SUCCESS : rc;
}

int scr_param_count(void)
{
  return scr_param_table_size();
}

const scr_param_def* scr_param_at(int index)
{
  return scr_param_table_at(index);
}
