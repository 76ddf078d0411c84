// cxx_ofstream.cpp - an MPI application in C++ that checkpoints with
// std::ofstream, one file per process: ckpt_<step>/rank_<rank>.bin. Rank 0
// creates the step's directory (std::filesystem::create_directories) and a
// barrier orders that before the writes. On start-up every rank probes its own
// file of each step from the largest possible (--steps) downwards with
// std::ifstream, and the newest step that every rank can read is resumed.
// With --keep K, rank 0 deletes the directory of the checkpoint K steps back
// with std::filesystem::remove_all once everyone has written the new one.
// It knows nothing about checkpoint libraries.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app_common.h"

static std::string ckpt_dir(long step)
{
  return "ckpt_" + std::to_string(step);
}

static std::string ckpt_file(long step, int rank)
{
  return ckpt_dir(step) + "/rank_" + std::to_string(rank) + ".bin";
}

static void write_checkpoint(long step, int rank, const std::vector<uint64_t>& state)
{
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(ckpt_dir(step), ec);
    if (ec) {
      app_fail("create_directories", ckpt_dir(step).c_str(), ec.value());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  const std::string name = ckpt_file(step, rank);
  std::ofstream out(name, std::ios::binary | std::ios::trunc);
  if (!out.is_open()) {
    app_fail("cannot open", name.c_str(), errno);
  }
  const app_header h = app_make_header(step, rank, state.size());
  out.write(reinterpret_cast<const char*>(&h), sizeof(h));
  out.write(reinterpret_cast<const char*>(state.data()),
            static_cast<std::streamsize>(state.size() * sizeof(uint64_t)));
  out.close();
  if (out.fail()) {
    app_fail("cannot write", name.c_str(), errno);
  }
}

// all of an old checkpoint's directory, as C++ codes clean up
static void delete_old(long step, long every, long keep, int rank)
{
  const long old = step - keep * every;
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has written step
  if (rank == 0 && keep > 0 && old > 0) {
    std::error_code ec;
    std::filesystem::remove_all(ckpt_dir(old), ec);
    if (ec) {
      app_fail("remove_all", ckpt_dir(old).c_str(), ec.value());
    }
  }
}

// this rank's checkpoint of the step into state; false if it is missing or bad
static bool read_checkpoint(long step, int rank, std::vector<uint64_t>& state)
{
  std::ifstream in(ckpt_file(step, rank), std::ios::binary);
  if (!in.is_open()) {
    return false;
  }
  app_header h;
  if (!in.read(reinterpret_cast<char*>(&h), sizeof(h)) ||
      !app_header_ok(&h, step, rank, state.size())) {
    return false;
  }
  std::vector<uint64_t> data(state.size());
  if (!in.read(reinterpret_cast<char*>(data.data()),
               static_cast<std::streamsize>(data.size() * sizeof(uint64_t)))) {
    return false;
  }
  state.swap(data);
  return true;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  app_opts o;
  if (!app_parse(argc, argv, rank, &o, 1)) {
    MPI_Finalize();
    return 2;
  }

  std::vector<uint64_t> state(app_words(&o));
  app_init_state(state.data(), state.size(), rank);

  // the newest step whose checkpoint every rank can read
  long start = 0;
  for (long s = o.steps; s >= 1; s--) {
    int mine = read_checkpoint(s, rank, state) ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
      start = s;
      break;
    }
  }
  if (start == 0) {
    app_init_state(state.data(), state.size(), rank);  // a partial read may have filled it
  }
  app_say_start(start, rank);

  for (long t = start + 1; t <= o.steps; t++) {
    app_step(state.data(), state.size(), t);
    if (t % o.every == 0) {
      write_checkpoint(t, rank, state);
      app_say_checkpoint(t, rank);
      delete_old(t, o.every, o.keep, rank);
    }
    app_maybe_die(&o, t, rank);
  }

  app_result(state.data(), state.size(), rank);
  MPI_Finalize();
  return 0;
}
