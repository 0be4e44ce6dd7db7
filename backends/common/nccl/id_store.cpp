#include "id_store.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace glabench::cuda_plugin::nccl {
namespace {

// A request: the token (32 hex digits), 'P' or 'G', the rank and the seconds a get may
// wait (int32 each, network order), the key's length (uint16) and the key, then for a put
// the value's length (int32) and the value. A reply: one status byte, then for a get the
// value's length and the value.
constexpr int kTokenChars = 32;
constexpr size_t kMaxKey = 256, kMaxValue = 4096;
constexpr int kMaxWaitS = 600;
enum status : char { ok = '0', bad_token = 'T', timed_out = 'W', malformed = 'E' };

// Signals interrupt socket calls that have a timeout (signal(7)): retried.
bool read_all(int fd, void* to, size_t n) {
  auto* p = static_cast<char*>(to);
  while (n) {
    const ssize_t got = recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got, n -= static_cast<size_t>(got);
  }
  return true;
}
bool write_all(int fd, const void* from, size_t n) {
  const auto* p = static_cast<const char*>(from);
  while (n) {
    const ssize_t put = send(fd, p, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put, n -= static_cast<size_t>(put);
  }
  return true;
}
bool read_int(int fd, int32_t* x) {
  uint32_t net = 0;
  if (!read_all(fd, &net, sizeof net)) return false;
  *x = static_cast<int32_t>(ntohl(net));
  return true;
}
bool write_int(int fd, int32_t x) {
  const uint32_t net = htonl(static_cast<uint32_t>(x));
  return write_all(fd, &net, sizeof net);
}
void receive_timeout(int fd, int seconds) {
  timeval tv{};
  tv.tv_sec = seconds;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

// Whether the client of `fd` has hung up (its worker was killed while it waited).
bool peer_gone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

struct store {
  std::string token;
  std::mutex m;
  std::condition_variable put;
  std::map<std::string, std::vector<std::string>> values;  // key → rank 0's puts, in order
  std::map<std::pair<std::string, int>, size_t> taken;     // (key, rank) → puts it has seen
};

// One connection, one request.
void serve(store* s, int fd) {
  receive_timeout(fd, 10);  // a client that stops sending does not hold a thread
  char token[kTokenChars];
  char op = 0;
  int32_t rank = 0, wait_s = 0, value_size = 0;
  uint16_t key_size = 0;
  std::string key, value;
  bool well_formed = read_all(fd, token, sizeof token) && read_all(fd, &op, 1) &&
                     read_int(fd, &rank) && read_int(fd, &wait_s) &&
                     read_all(fd, &key_size, sizeof key_size);
  key_size = ntohs(key_size);
  well_formed = well_formed && key_size <= kMaxKey && (op == 'P' || op == 'G') && rank >= 0;
  if (well_formed) {
    key.resize(key_size);
    well_formed = read_all(fd, key.data(), key.size());
  }
  if (well_formed && op == 'P') {
    well_formed = read_int(fd, &value_size) && value_size >= 0 &&
                  static_cast<size_t>(value_size) <= kMaxValue;
    if (well_formed) {
      value.resize(static_cast<size_t>(value_size));
      well_formed = read_all(fd, value.data(), value.size());
    }
  }
  char reply = ok;
  if (!well_formed) {
    reply = malformed;
  } else if (std::string(token, sizeof token) != s->token) {
    reply = bad_token;
  } else if (op == 'P') {
    // The putter's reply goes out before the value is published: a getter in the store's
    // own process (rank 0) may take the value and end that process at once, before this
    // thread could have answered, and the putter would read no reply. Both happen under
    // the lock, so a put is published before its putter can make the next request: a
    // putter's puts stay in order, and a get made after a put returned sees it.
    std::lock_guard<std::mutex> guard(s->m);
    write_all(fd, &reply, 1);
    close(fd);
    s->values[key].push_back(std::move(value));
    s->put.notify_all();
    return;
  } else {
    // A get takes a value only for a client still there: one that hung up while it waited
    // leaves the value to its rank's next get.
    std::unique_lock<std::mutex> lock(s->m);
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::seconds(std::clamp<int32_t>(wait_s, 0, kMaxWaitS));
    size_t& n = s->taken[{key, rank}];
    const std::vector<std::string>& all = s->values[key];
    for (;;) {
      const bool ready =
          s->put.wait_for(lock, std::chrono::milliseconds(200), [&] { return all.size() > n; });
      if (peer_gone(fd)) {
        lock.unlock();
        close(fd);
        return;
      }
      if (ready) {
        value = all.back(), n = all.size();
        break;
      }
      if (std::chrono::steady_clock::now() >= until) {
        reply = timed_out;
        break;
      }
    }
  }
  if (write_all(fd, &reply, 1) && reply == ok && op == 'G')
    write_int(fd, static_cast<int32_t>(value.size())) && write_all(fd, value.data(), value.size());
  close(fd);
}

std::string random_token() {
  unsigned char raw[kTokenChars / 2] = {};
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(raw), sizeof raw)) return {};
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (unsigned char c : raw) t += hex[c >> 4], t += hex[c & 15];
  return t;
}

// HOST:PORT:TOKEN, split at its last two colons (HOST may be an IPv6 address).
bool parse(const std::string& address, std::string* host, std::string* port, std::string* token) {
  const size_t b = address.rfind(':');
  if (b == std::string::npos || b == 0) return false;
  const size_t a = address.rfind(':', b - 1);
  if (a == std::string::npos || a == 0) return false;
  *host = address.substr(0, a), *port = address.substr(a + 1, b - a - 1);
  *token = address.substr(b + 1);
  return !host->empty() && !port->empty() && token->size() == kTokenChars;
}

// A connect that gives up after `seconds` (an address that drops packets would block
// for minutes): the socket is non-blocking.
constexpr int kConnectS = 5;
bool connected_within(int fd, const addrinfo* a, int seconds) {
  if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) return true;
  if (errno != EINPROGRESS) return false;
  pollfd p{fd, POLLOUT, 0};
  int r = 0;
  while ((r = poll(&p, 1, seconds * 1000)) < 0 && errno == EINTR) {
  }
  int failure = 0;
  socklen_t size = sizeof failure;
  return r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size) == 0 && failure == 0;
}

int connect_to(const std::string& host, const std::string& port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int e = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0) {
    *error = "the id store's host " + host + ": " + gai_strerror(e);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd >= 0 && !connected_within(fd, a, kConnectS)) close(fd), fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) {
    *error = "cannot connect to the id store at " + host + ":" + port;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // requests block, with timeouts
  return fd;
}

// Sends one request and reads its status (and a get's value into `into`).
std::string request(const std::string& address, char op, const std::string& key, int rank,
                    int wait_s, const char* bytes, int n, char* into) {
  std::string host, port, token;
  if (!parse(address, &host, &port, &token))
    return std::string(kIdStoreVariable) + " must be HOST:PORT:TOKEN (32 hex digits), not `" +
           address + "`";
  if (key.size() > kMaxKey || n < 0 || static_cast<size_t>(n) > kMaxValue)
    return "id store: key or value too long";
  std::string error;
  int fd = -1;
  for (size_t at = 0; fd < 0 && at <= host.size();) {  // each of HOST's comma-separated names
    const size_t end = std::min(host.find(',', at), host.size());
    fd = connect_to(host.substr(at, end - at), port, &error);
    at = end + 1;
  }
  if (fd < 0) return host.find(',') == std::string::npos ? error : error + " (nor at " + host + ")";
  receive_timeout(fd, wait_s + 10);
  const uint16_t key_size = htons(static_cast<uint16_t>(key.size()));
  bool sent = write_all(fd, token.data(), token.size()) && write_all(fd, &op, 1) &&
              write_int(fd, rank) && write_int(fd, wait_s) &&
              write_all(fd, &key_size, sizeof key_size) && write_all(fd, key.data(), key.size());
  if (op == 'P') sent = sent && write_int(fd, n) && write_all(fd, bytes, static_cast<size_t>(n));
  char reply = 0;
  int32_t size = 0;
  std::string why;
  if (!sent || !read_all(fd, &reply, 1)) {
    why = "the id store at " + host + ":" + port + " did not answer";
  } else if (reply == bad_token) {
    why = "the id store at " + host + ":" + port + " refused the token";
  } else if (reply == timed_out) {
    why = "no value of `" + key + "` from rank 0 in the id store within " + std::to_string(wait_s) +
          " s";
  } else if (reply != ok) {
    why = "the id store refused a malformed request";
  } else if (op == 'G' && (!read_int(fd, &size) || size != n || !read_all(fd, into, size_t(n)))) {
    why = "the id store's value of `" + key + "` is not " + std::to_string(n) + " bytes";
  }
  close(fd);
  return why;
}

// The names other ranks may reach this node by, comma-separated, each tried in turn: its
// hostname where the name resolves here, then its non-loopback IPv4 addresses; localhost
// where there is none (one node).
std::string reachable_names() {
  std::string names;
  char name[256] = {};
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (gethostname(name, sizeof name - 1) == 0 && getaddrinfo(name, nullptr, &hints, &found) == 0) {
    freeaddrinfo(found);
    names = name;
  }
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) == 0) {
    for (ifaddrs* i = all; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK))
        continue;
      char text[INET_ADDRSTRLEN] = {};
      if (inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                    sizeof text) &&
          names.size() < 200)
        names += (names.empty() ? "" : ",") + std::string(text);
    }
    freeifaddrs(all);
  }
  return names.empty() ? "localhost" : names;
}

}  // namespace

std::string serve_id_store(std::string* error) {
  auto* s = new store;  // lives as long as the process: workers may ask until it exits
  s->token = random_token();
  if (s->token.empty()) return *error = "id store: cannot read /dev/urandom", std::string();
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool bound = false;
  if (fd >= 0) {  // both IPv6 and IPv4 where the system allows
    const int no = 0, yes = 1;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in6 at{};
    at.sin6_family = AF_INET6;
    at.sin6_addr = in6addr_any;
    bound = bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0;
    if (!bound) close(fd);
  }
  if (!bound) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_ANY);
    bound = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0;
  }
  sockaddr_storage local{};
  socklen_t size = sizeof local;
  if (!bound || listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) != 0) {
    if (fd >= 0) close(fd);
    return *error = std::string("id store: cannot listen: ") + std::strerror(errno), std::string();
  }
  const int port = local.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  const char* named = std::getenv("GLABENCH_ID_STORE_HOST");
  const std::string host = named && *named ? named : reachable_names();
  std::thread([s, fd] {
    for (;;) {
      const int client = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0)
        std::thread(serve, s, client).detach();
      else  // out of descriptors, say: try again shortly
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }).detach();
  return host + ":" + std::to_string(port) + ":" + s->token;
}

std::string id_store_put(const std::string& address, const std::string& key, const char* bytes,
                         int n) {
  return request(address, 'P', key, 0, 0, bytes, n, nullptr);
}

std::string id_store_get(const std::string& address, const std::string& key, int rank, char* bytes,
                         int n, int timeout_s) {
  return request(address, 'G', key, rank, timeout_s, nullptr, n, bytes);
}

}  // namespace glabench::cuda_plugin::nccl
