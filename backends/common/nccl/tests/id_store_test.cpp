// The id store (id_store.hpp): each of rank 0's puts reaches each rank once (the newest,
// for a rank that missed one), a get waits for a put and times out without one, a wrong
// token or address is refused with the reason; and a process under a launcher with
// GLABENCH_ID_STORE set takes its ids from the store.
#define BOOST_TEST_MODULE id_store
#include "id_store.hpp"

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>
#include <thread>

#include "nccl_link.hpp"

namespace nccl = glabench::cuda_plugin::nccl;

namespace {
std::string served() {
  std::string error;
  const std::string at = nccl::serve_id_store(&error);
  BOOST_TEST_REQUIRE(error.empty(), error);
  return at;
}
std::string value(int i) {
  std::string v(128, '\0');
  for (int b = 0; b < 128; ++b) v[b] = static_cast<char>(i * 7 + b);
  return v;
}
}  // namespace

BOOST_AUTO_TEST_CASE(each_rank_takes_each_put_once) {
  const std::string at = served();
  for (int i = 0; i < 2; ++i) {
    BOOST_TEST(nccl::id_store_put(at, "RING", value(i).data(), 128).empty());
    for (int rank : {1, 2}) {
      std::string got(128, '\0');
      BOOST_TEST(nccl::id_store_get(at, "RING", rank, got.data(), 128).empty());
      BOOST_TEST((got == value(i)));
    }
  }
  std::string got(128, '\0');
  const std::string e = nccl::id_store_get(at, "RING", 1, got.data(), 128, 1);
  BOOST_TEST(e.find("within 1 s") != std::string::npos, e);
  BOOST_TEST(nccl::id_store_get(at, "OTHER", 1, got.data(), 128, 0).find("`OTHER`") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_rank_that_missed_a_put_takes_the_newest) {
  const std::string at = served();
  BOOST_TEST(nccl::id_store_put(at, "KEY", value(0).data(), 128).empty());
  BOOST_TEST(nccl::id_store_put(at, "KEY", value(1).data(), 128).empty());
  std::string got(128, '\0');
  BOOST_TEST(nccl::id_store_get(at, "KEY", 1, got.data(), 128).empty());
  BOOST_TEST((got == value(1)));
}

BOOST_AUTO_TEST_CASE(a_get_waits_for_the_put) {
  const std::string at = served();
  std::string got(128, '\0'), e = "not run";
  std::thread waiter([&] { e = nccl::id_store_get(at, "KEY", 3, got.data(), 128, 30); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  BOOST_TEST(nccl::id_store_put(at, "KEY", value(5).data(), 128).empty());
  waiter.join();
  BOOST_TEST(e.empty(), e);
  BOOST_TEST((got == value(5)));
}

BOOST_AUTO_TEST_CASE(a_wrong_token_or_address_is_refused) {
  const std::string at = served();
  std::string wrong = at;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  char buffer[128] = {};
  const std::string e = nccl::id_store_put(wrong, "KEY", buffer, 128);
  BOOST_TEST(e.find("refused the token") != std::string::npos, e);
  const std::string bad = nccl::id_store_get("no-port-here", "KEY", 1, buffer, 128, 1);
  BOOST_TEST(bad.find("GLABENCH_ID_STORE must be HOST:PORT:TOKEN") != std::string::npos, bad);
  const std::string gone =
      nccl::id_store_get("localhost:1:" + std::string(32, 'a'), "KEY", 1, buffer, 128, 1);
  BOOST_TEST(gone.find("cannot connect") != std::string::npos, gone);
  // A value of another size than asked is refused, not truncated.
  BOOST_TEST(nccl::id_store_put(at, "SHORT", buffer, 16).empty());
  const std::string size = nccl::id_store_get(at, "SHORT", 1, buffer, 128, 1);
  BOOST_TEST(size.find("is not 128 bytes") != std::string::npos, size);
}

#if GLABENCH_HAVE_NCCL
BOOST_AUTO_TEST_CASE(a_launched_rank_takes_its_ids_from_the_store) {
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv(nccl::kIdStoreVariable, "node7:4242:0123456789abcdef0123456789abcdef", 1);
  const nccl::process_ranks& k = nccl::process_knobs("ID_STORE_TEST");
  BOOST_TEST(k.error.empty(), k.error);
  BOOST_TEST(k.world == 2);
  BOOST_TEST(k.rank == 1);
  BOOST_TEST(k.id_store == "node7:4242:0123456789abcdef0123456789abcdef");
  BOOST_TEST(k.key == "ID_STORE_TEST");
  BOOST_TEST(k.id_file.empty());
  // The backend's own file still wins where named.
  setenv("ID_STORE_FILE_TEST_NCCL_ID_FILE", "/shared/id", 1);
  const nccl::process_ranks& f = nccl::process_knobs("ID_STORE_FILE_TEST");
  BOOST_TEST(f.id_file == "/shared/id");
  BOOST_TEST(f.id_store.empty());
}
#endif
