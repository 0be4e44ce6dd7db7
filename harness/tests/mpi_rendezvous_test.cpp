// Which launchers the MPI rendezvous runs under (mpi_rendezvous.hpp's choose_mpi, on the
// launcher's variables as launcher.hpp reads them; srun only inside a job step), and when
// MPI's world is not the launcher's (same_world).
#include "mpi_rendezvous.hpp"

#include <boost/test/unit_test.hpp>
#include <map>
#include <string>

using glabench::choose_mpi;

namespace {
auto env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

BOOST_AUTO_TEST_SUITE(mpi_rendezvous)

BOOST_AUTO_TEST_CASE(open_mpi_and_mpich_launchers_take_their_own_library) {
  const auto open =
      choose_mpi(env_of({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2"}}));
  BOOST_TEST(open.wanted);
  BOOST_TEST(open.open_mpi);
  const auto mpich = choose_mpi(env_of({{"PMI_SIZE", "2"}, {"PMI_RANK", "0"}}));
  BOOST_TEST(mpich.wanted);
  BOOST_TEST(!mpich.open_mpi);
}

BOOST_AUTO_TEST_CASE(srun_needs_an_mpi_plugin) {
  const auto plain =
      choose_mpi(env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}}));
  BOOST_TEST(!plain.wanted);
  BOOST_TEST(plain.why_not == "not started by mpirun or by srun with an MPI plugin");
  BOOST_TEST(choose_mpi(env_of({{"SLURM_PROCID", "1"},
                                {"SLURM_NTASKS", "2"},
                                {"SLURM_STEP_ID", "0"},
                                {"PMIX_RANK", "1"}}))
                 .wanted);
  BOOST_TEST(choose_mpi(env_of({{"SLURM_PROCID", "0"},
                                {"SLURM_NTASKS", "2"},
                                {"SLURM_STEP_ID", "0"},
                                {"PMI_RANK", "0"},
                                {"PMI_SIZE", "2"}}))
                 .wanted);
}

BOOST_AUTO_TEST_CASE(one_process_torchrun_and_the_opt_out_take_none) {
  BOOST_TEST(choose_mpi(env_of({})).why_not ==
             "not started by mpirun or by srun with an MPI plugin");
  BOOST_TEST(choose_mpi(env_of({{"OMPI_COMM_WORLD_SIZE", "1"}})).why_not == "one process");
  BOOST_TEST(choose_mpi(env_of({{"RANK", "0"},
                                {"WORLD_SIZE", "2"},
                                {"LOCAL_RANK", "0"},
                                {"OMPI_COMM_WORLD_SIZE", "2"}}))
                 .why_not == "started by torchrun");
  BOOST_TEST(choose_mpi(env_of({{"GLABENCH_MPI", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}})).why_not ==
             "GLABENCH_MPI=0");
}

BOOST_AUTO_TEST_CASE(an_mpi_that_started_alone_is_not_the_launchers_world) {
  BOOST_TEST(glabench::same_world(2, 4, 2, 4));
  BOOST_TEST(!glabench::same_world(0, 1, 2, 4));  // each process rank 0 of its own world
  BOOST_TEST(!glabench::same_world(1, 4, 2, 4));
}

BOOST_AUTO_TEST_SUITE_END()
