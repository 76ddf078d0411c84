/* scr-test-app.c - an MPI program checkpointing through the SCR API, for the tests:
 * deterministic per-rank content, restart verification and ways to fail on purpose. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "scr.h"

static int rank, ranks;

/* word i of the file rank r writes at step s */
static uint64_t content_word(int step, int r, uint64_t i)
{
  uint64_t x = (uint64_t) step * 1000003u + (uint64_t) r * 7919u + i;
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

static int write_file(const char* path, int step, size_t bytes)
{
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); return 0; }
  uint64_t buf[4096];
  size_t words = bytes / 8, i = 0;
  while (i < words) {
    size_t n = words - i < 4096 ? words - i : 4096;
    for (size_t k = 0; k < n; k++) buf[k] = content_word(step, rank, i + k);
    if (fwrite(buf, 8, n, f) != n) { fclose(f); return 0; }
    i += n;
  }
  return fclose(f) == 0;
}

/* 1 if path holds exactly what rank r wrote at step s with the given size */
static int check_file(const char* path, int step, int r, size_t bytes)
{
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  uint64_t buf[4096];
  size_t words = bytes / 8, i = 0;
  int ok = 1;
  while (ok && i < words) {
    size_t n = words - i < 4096 ? words - i : 4096;
    if (fread(buf, 8, n, f) != n) ok = 0;
    for (size_t k = 0; ok && k < n; k++) ok = buf[k] == content_word(step, r, i + k);
    i += n;
  }
  if (ok && fgetc(f) != EOF) ok = 0;
  fclose(f);
  return ok;
}

/* the file name of a rank at a step: the template with {step} and {rank} replaced */
static void expand_path(char* out, size_t len, const char* tmpl, int step, int r)
{
  size_t n = 0;
  out[0] = '\0';
  for (const char* p = tmpl; *p && n + 1 < len; ) {
    int w = 0;
    if (!strncmp(p, "{step}", 6)) w = snprintf(out + n, len - n, "%d", step), p += 6;
    else if (!strncmp(p, "{rank}", 6)) w = snprintf(out + n, len - n, "%d", r), p += 6;
    else out[n++] = *p++, out[n] = '\0';
    if (w > 0) n += (size_t) w < len - n ? (size_t) w : len - n - 1;
  }
}

/* what an application without SCR does: create the parent directories itself */
static void make_parents(const char* path)
{
  char dir[SCR_MAX_FILENAME];
  snprintf(dir, sizeof(dir), "%s", path);
  for (char* p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) perror(dir);
    *p = '/';
  }
}

static void sleep_ms(int ms)
{
  if (ms <= 0) return;
  struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* rank 0 reports the outcome of a dataset-management call */
static void report(const char* what, const char* name, int rc)
{
  if (rank == 0) printf("%s %s: %s\n", what, name, rc == SCR_SUCCESS ? "ok" : "failed");
}

static void usage(void)
{
  fprintf(stderr, "usage: scr-test-app [--steps N] [--bytes B] [--crash-after STEP] "
          "[--output-every K] [--until-exit] [--invalid-restart] [--ignore-restart]\n"
          "         [--path TEMPLATE] [--mkdir] [--step-sleep MS] [--ckpt-sleep MS]\n"
          "         [--config LINE]... [--version] [--current NAME] [--drop NAME]\n"
          "         [--delete NAME] [--restart-route NAME] [--invalid-step STEP]\n"
          "         [--crash-during STEP] [--route-idle NAME] [--hold FILE]\n"
          "       scr-test-app --check FILE STEP RANK BYTES\n"
          "TEMPLATE names each rank's checkpoint file with {step} and {rank}\n"
          "(default ckpt.{step}/rank_{rank}.dat); --config calls SCR_Config before SCR_Init\n"
          "and prints what it returned; --current, --drop and --delete run after SCR_Init,\n"
          "before the restart, in the order given; --restart-route routes one more file\n"
          "(a TEMPLATE) while restarting; --route-idle routes NAME outside any phase;\n"
          "--hold waits before SCR_Finalize until FILE exists (a test runs another job meanwhile).\n");
  exit(2);
}

int main(int argc, char** argv)
{
  int steps = 3, crash_after = -1, output_every = 0, until_exit = 0, invalid_restart = 0;
  int ignore_restart = 0, make_dirs = 0, step_sleep = 0, ckpt_sleep = 0, print_version = 0;
  int invalid_step = -1, crash_during = -1;
  const char* tmpl = "ckpt.{step}/rank_{rank}.dat";
  const char* restart_route = NULL;
  const char* route_idle = NULL;
  const char* hold = NULL;
  const char* configs[32];
  int nconfigs = 0;
  const char* manage[32][2];  /* {call, name} pairs */
  int nmanage = 0;
  size_t bytes = 1 << 16;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--check") && i + 4 < argc)
      return check_file(argv[i + 1], atoi(argv[i + 2]), atoi(argv[i + 3]),
                        (size_t) strtoull(argv[i + 4], NULL, 0)) ? 0 : 1;
    else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) bytes = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--crash-after") && i + 1 < argc) crash_after = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--output-every") && i + 1 < argc) output_every = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--until-exit")) until_exit = 1;
    else if (!strcmp(argv[i], "--invalid-restart")) invalid_restart = 1;
    else if (!strcmp(argv[i], "--ignore-restart")) ignore_restart = 1;
    else if (!strcmp(argv[i], "--path") && i + 1 < argc) tmpl = argv[++i];
    else if (!strcmp(argv[i], "--mkdir")) make_dirs = 1;
    else if (!strcmp(argv[i], "--step-sleep") && i + 1 < argc) step_sleep = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ckpt-sleep") && i + 1 < argc) ckpt_sleep = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--config") && i + 1 < argc && nconfigs < 32)
      configs[nconfigs++] = argv[++i];
    else if (!strcmp(argv[i], "--version")) print_version = 1;
    else if ((!strcmp(argv[i], "--current") || !strcmp(argv[i], "--drop") ||
              !strcmp(argv[i], "--delete")) && i + 1 < argc && nmanage < 32) {
      manage[nmanage][0] = argv[i] + 2;
      manage[nmanage++][1] = argv[++i];
    }
    else if (!strcmp(argv[i], "--restart-route") && i + 1 < argc) restart_route = argv[++i];
    else if (!strcmp(argv[i], "--route-idle") && i + 1 < argc) route_idle = argv[++i];
    else if (!strcmp(argv[i], "--hold") && i + 1 < argc) hold = argv[++i];
    else if (!strcmp(argv[i], "--invalid-step") && i + 1 < argc) invalid_step = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--crash-during") && i + 1 < argc) crash_during = atoi(argv[++i]);
    else usage();
  }

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  for (int i = 0; i < nconfigs; i++) {
    const char* value = SCR_Config(configs[i]);
    if (rank == 0) printf("config %s: %s\n", configs[i], value ? value : "(null)");
    free((char*) value);
  }
  if (SCR_Init() != SCR_SUCCESS) {
    fprintf(stderr, "SCR_Init failed\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (print_version && rank == 0) printf("version: %s\n", SCR_Get_version());
  if (route_idle) {
    char routed[SCR_MAX_FILENAME];
    int rc = SCR_Route_file(route_idle, routed);
    if (rank == 0) printf("idle route %s: %s\n", route_idle, rc == SCR_SUCCESS ? routed : "failed");
  }
  for (int i = 0; i < nmanage; i++) {
    const char* call = manage[i][0];
    const char* n = manage[i][1];
    int rc = !strcmp(call, "current") ? SCR_Current(n)
           : !strcmp(call, "drop")    ? SCR_Drop(n) : SCR_Delete(n);
    report(call, n, rc);
  }

  int start = 1;
  int have = 0;
  char name[SCR_MAX_FILENAME];
  char file[SCR_MAX_FILENAME];
  char path[SCR_MAX_FILENAME];
  SCR_Have_restart(&have, name);
  while (have && !ignore_restart) {
    int step = 0;
    SCR_Start_restart(name);
    sscanf(name, "ckpt.%d", &step);
    expand_path(path, sizeof(path), tmpl, step, rank);
    int valid = SCR_Route_file(path, file) == SCR_SUCCESS && check_file(file, step, rank, bytes);
    if (restart_route) {
      char other[SCR_MAX_FILENAME], routed[SCR_MAX_FILENAME];
      expand_path(other, sizeof(other), restart_route, step, rank);
      int rc = SCR_Route_file(other, routed);
      /* the routed file must be the one written under that name */
      if (rc == SCR_SUCCESS && !check_file(routed, step, rank, bytes)) rc = SCR_FAILURE;
      report("restart route", restart_route, rc);
    }
    if (invalid_restart) valid = 0, invalid_restart = 0;
    if (SCR_Complete_restart(valid) == SCR_SUCCESS) {
      if (rank == 0) printf("restart: %s\n", name);
      start = step + 1;
      break;
    }
    if (rank == 0) printf("restart rejected: %s\n", name);
    SCR_Have_restart(&have, name);
  }
  if (start == 1 && rank == 0) printf("restart: none\n");

  int step;
  for (step = start; step <= steps; step++) {
    int need = 0;
    sleep_ms(step_sleep);
    SCR_Need_checkpoint(&need);
    if (need) {
      snprintf(name, sizeof(name), "ckpt.%d", step);
      SCR_Start_output(name, SCR_FLAG_CHECKPOINT);
      expand_path(path, sizeof(path), tmpl, step, rank);
      int routed = SCR_Route_file(path, file) == SCR_SUCCESS;
      if (!routed && rank == 0) printf("route %s: failed\n", path);
      if (routed && make_dirs) make_parents(file);
      if (step == crash_during) {
        /* die with half of the checkpoint written, as a node failure would */
        if (routed) write_file(file, step, bytes / 2);
        MPI_Barrier(MPI_COMM_WORLD);
        fflush(stdout);
        raise(SIGKILL);
      }
      int valid = routed && write_file(file, step, bytes);
      if (step == invalid_step) valid = 0;
      sleep_ms(ckpt_sleep);
      if (SCR_Complete_output(valid) == SCR_SUCCESS && rank == 0) printf("checkpoint: %s\n", name);
      if (step == crash_after) {
        MPI_Barrier(MPI_COMM_WORLD);
        fflush(stdout);
        raise(SIGKILL);
      }
    }
    if (output_every > 0 && step % output_every == 0) {
      snprintf(name, sizeof(name), "out.%d", step);
      SCR_Start_output(name, SCR_FLAG_OUTPUT);
      snprintf(path, sizeof(path), "out.%d/rank_%d.dat", step, rank);
      int routed = SCR_Route_file(path, file) == SCR_SUCCESS;
      if (routed && make_dirs) make_parents(file);
      int valid = routed && write_file(file, step, bytes);
      if (SCR_Complete_output(valid) == SCR_SUCCESS && rank == 0) printf("output: %s\n", name);
    }
    if (until_exit) {
      int flag = 0;
      SCR_Should_exit(&flag);
      if (flag) {
        if (rank == 0) printf("halted after step %d\n", step);
        break;
      }
    }
  }
  if (rank == 0) printf("done: step %d\n", step > steps ? steps : step);
  if (hold) {
    fflush(stdout);
    /* the test's timeout ends a wait that never ends */
    if (rank == 0)
      while (access(hold, F_OK) != 0) usleep(20000);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  SCR_Finalize();
  MPI_Finalize();
  return 0;
}
