// A launched process's place (glabench/launcher.hpp) from each launcher's own variables:
// torchrun, Open MPI's and MPICH's mpirun, Slurm's srun; none; precedence; refusals; and
// the rendezvous file's name.
#include "glabench/launcher.hpp"

#include <boost/test/unit_test.hpp>
#include <map>
#include <string>

using glabench::launcher::launcher_place;
using glabench::launcher::place;
using glabench::launcher::rendezvous_file;

namespace {

using vars = std::map<std::string, std::string>;
glabench::launcher::environment env_of(const vars& v) {
  return [v](const char* name) -> const char* {
    const auto it = v.find(name);
    return it == v.end() ? nullptr : it->second.c_str();
  };
}

void check(const vars& v, const std::string& launcher, int rank, int world, int local,
           const std::string& job) {
  const place p = launcher_place(env_of(v));
  BOOST_TEST(p.error == "");
  BOOST_TEST(p.launcher == launcher);
  BOOST_TEST(p.rank == rank);
  BOOST_TEST(p.world == world);
  BOOST_TEST(p.local_rank == local);
  BOOST_TEST(p.job == job);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(launcher)

BOOST_AUTO_TEST_CASE(no_launcher_is_one_process) {
  check({}, "", 0, 1, 0, "");
  // A Slurm batch script's own shell (no job step) is not a task.
  check({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "77"}}, "", 0, 1, 0, "");
}

BOOST_AUTO_TEST_CASE(each_launcher_from_its_own_variables) {
  check({{"RANK", "5"},
         {"WORLD_SIZE", "8"},
         {"LOCAL_RANK", "1"},
         {"TORCHELASTIC_RUN_ID", "abc"},
         {"TORCHELASTIC_RESTART_COUNT", "2"},
         {"MASTER_PORT", "29500"}},
        "torchrun", 5, 8, 1, "abc.2");
  BOOST_TEST(launcher_place(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}}))
                 .instance == "29500");
  check({{"OMPI_COMM_WORLD_RANK", "3"},
         {"OMPI_COMM_WORLD_SIZE", "4"},
         {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
         {"OMPI_MCA_ess_base_jobid", "1234"}},
        "mpirun (Open MPI)", 3, 4, 3, "1234");
  check({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}}, "mpirun (MPICH)", 2, 4, 0,
        "");
  check({{"SLURM_PROCID", "6"},
         {"SLURM_NTASKS", "16"},
         {"SLURM_LOCALID", "2"},
         {"SLURM_JOB_ID", "991"},
         {"SLURM_STEP_ID", "0"}},
        "srun", 6, 16, 2, "991.0");
}

BOOST_AUTO_TEST_CASE(the_processes_on_the_node_from_each_launcher_else_the_world) {
  auto local_world = [](const vars& v) { return launcher_place(env_of(v)).local_world; };
  BOOST_TEST(local_world({}) == 1);
  BOOST_TEST(
      local_world(
          {{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}}) ==
      4);
  BOOST_TEST(local_world({{"RANK", "5"}, {"WORLD_SIZE", "8"}}) == 8);  // unknown: all here
  BOOST_TEST(local_world({{"OMPI_COMM_WORLD_RANK", "0"},
                          {"OMPI_COMM_WORLD_SIZE", "4"},
                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}) == 2);
  BOOST_TEST(local_world({{"PMI_RANK", "0"}, {"PMI_SIZE", "4"}, {"MPI_LOCALNRANKS", "1"}}) == 1);
  // srun: the largest of the per-node counts.
  const vars srun = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "7"}, {"SLURM_STEP_ID", "0"}};
  vars listed = srun;
  listed["SLURM_STEP_TASKS_PER_NODE"] = "2(x3),1";
  BOOST_TEST(local_world(listed) == 2);
  listed["SLURM_STEP_TASKS_PER_NODE"] = "1,4(x2)";
  BOOST_TEST(local_world(listed) == 4);
  listed["SLURM_STEP_TASKS_PER_NODE"] = "(x2)";  // unreadable: the world
  BOOST_TEST(local_world(listed) == 7);
  // Never fewer than the node-local rank says.
  BOOST_TEST(
      local_world(
          {{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "2"}}) ==
      4);
}

BOOST_AUTO_TEST_CASE(a_missing_local_rank_is_sruns_else_the_rank) {
  check({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, "mpirun (MPICH)", 1, 2, 1, "");
  check({{"PMI_RANK", "5"}, {"PMI_SIZE", "8"}, {"SLURM_LOCALID", "1"}}, "mpirun (MPICH)", 5, 8, 1,
        "");
}

BOOST_AUTO_TEST_CASE(torchrun_inside_srun_is_torchruns) {
  check({{"RANK", "1"},
         {"WORLD_SIZE", "2"},
         {"LOCAL_RANK", "1"},
         {"SLURM_PROCID", "0"},
         {"SLURM_NTASKS", "1"},
         {"SLURM_STEP_ID", "0"}},
        "torchrun", 1, 2, 1, "");
}

BOOST_AUTO_TEST_CASE(bad_values_are_refused_naming_the_variable) {
  BOOST_TEST(launcher_place(env_of({{"WORLD_SIZE", "two"}, {"RANK", "0"}})).error ==
             "WORLD_SIZE must be an integer from 0 to 1000000, not `two`");
  BOOST_TEST(launcher_place(env_of({{"WORLD_SIZE", "2"}})).error == "RANK is not set");
  BOOST_TEST(launcher_place(env_of({{"PMI_SIZE", "2"}, {"PMI_RANK", "2"}})).error ==
             "PMI_RANK must be below PMI_SIZE (2), not 2");
  BOOST_TEST(launcher_place(env_of({{"PMI_SIZE", "0"}, {"PMI_RANK", "0"}})).error ==
             "PMI_SIZE must be at least 1");
  BOOST_TEST(launcher_place(env_of({{"OMPI_COMM_WORLD_SIZE", "2"},
                                    {"OMPI_COMM_WORLD_RANK", "1"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "-1"}}))
                 .error ==
             "OMPI_COMM_WORLD_LOCAL_RANK must be an integer from 0 to 1000000, not `-1`");
}

BOOST_AUTO_TEST_CASE(the_rendezvous_file_is_named_by_job_and_parent) {
  place p;
  p.job = "991.0";
  BOOST_TEST(rendezvous_file(p, "nccl-id", 4242, env_of({{"TMPDIR", "/scratch"}})) ==
             "/scratch/glabench-nccl-id-991.0-4242");
  p.job = "a/b c";
  BOOST_TEST(rendezvous_file(p, "nccl-id", 7, env_of({})) == "/tmp/glabench-nccl-id-a_b_c-7");
  p.job.clear();
  BOOST_TEST(rendezvous_file(p, "nccl-id", 7, env_of({})) == "/tmp/glabench-nccl-id-7");
  // torchrun: its ranks' parents differ; they share the store's port.
  p.instance = "29500";
  BOOST_TEST(rendezvous_file(p, "nccl-id", 7, env_of({})) == "/tmp/glabench-nccl-id-i29500");
}

// A party's own variables (<prefix>_NCCL_WORLD, _RANK) come before a launcher's; without
// them the launcher's place; a variable that holds no rank is named.
BOOST_AUTO_TEST_CASE(a_partys_own_variables_come_first) {
  using glabench::launcher::ranks_place;
  const place own = ranks_place(
      "X",
      env_of({{"X_NCCL_WORLD", "4"}, {"X_NCCL_RANK", "3"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  BOOST_TEST(own.error == "");
  BOOST_TEST(own.launcher == "X_NCCL_WORLD");
  BOOST_TEST(own.world == 4);
  BOOST_TEST(own.rank == 3);
  const place launched = ranks_place("X", env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  BOOST_TEST(launched.launcher == "torchrun");
  BOOST_TEST(launched.rank == 1);
  BOOST_TEST(ranks_place("X", env_of({})).world == 1);
  BOOST_TEST(ranks_place("X", env_of({{"X_NCCL_WORLD", "two"}})).error ==
             "X_NCCL_WORLD must be an integer from 0 to 4096, not `two`");
  BOOST_TEST(ranks_place("X", env_of({{"X_NCCL_WORLD", "0"}})).error ==
             "X_NCCL_WORLD must be at least 1");
  BOOST_TEST(ranks_place("X", env_of({{"X_NCCL_WORLD", "2"}, {"X_NCCL_RANK", "2"}})).error ==
             "X_NCCL_RANK must be set, from 0 to X_NCCL_WORLD − 1");
  BOOST_TEST(ranks_place("X", env_of({{"X_NCCL_WORLD", "2"}})).error ==
             "X_NCCL_RANK must be set, from 0 to X_NCCL_WORLD − 1");
}

// A backend in glabench's worker finds the launcher through the variable glabench set.
BOOST_AUTO_TEST_CASE(a_worker_finds_the_launcher_through_glabench) {
  using glabench::launcher::launcher_process;
  BOOST_TEST(launcher_process(77, env_of({})) == 77);
  BOOST_TEST(launcher_process(77, env_of({{"GLABENCH_LAUNCHER_PID", "4242"}})) == 4242);
  BOOST_TEST(launcher_process(77, env_of({{"GLABENCH_LAUNCHER_PID", "42x"}})) == 77);
  BOOST_TEST(launcher_process(77, env_of({{"GLABENCH_LAUNCHER_PID", "-3"}})) == 77);
  using glabench::launcher::glabench_started;
  BOOST_TEST(glabench_started(env_of({})) == 0);
  BOOST_TEST(glabench_started(env_of({{"GLABENCH_STARTED", "1764000000"}})) == 1764000000);
  BOOST_TEST(glabench_started(env_of({{"GLABENCH_STARTED", "soon"}})) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
