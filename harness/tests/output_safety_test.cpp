// Results never lost or half-written, and hostile strings never crash the writer:
// safe_text.hpp's escaping, and run_context.hpp's output checks, exclusive temporary
// files and staged report folders.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "run_context.hpp"
#include "safe_text.hpp"

using namespace glabench;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

// A fresh, empty folder under SCRATCH_DIR.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(SCRATCH_DIR) / "output_safety" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

bool has_control_or_invalid(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  try {
    (void)nlohmann::json(s).dump();  // throws type_error 316 on invalid UTF-8
  } catch (const nlohmann::json::type_error&) {
    return true;
  }
  return false;
}

template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

const std::string kHostile[] = {"\x1b[31mred\x1b[0m",
                                "line\nFORGED",
                                "\xff\xfe",
                                "nul\0byte"s,
                                "\xc0\xaf",
                                "\xed\xa0\x80",
                                "\xe2\x89",
                                "\xf4\x90\x80\x80",
                                "\xc2\x9b"
                                "2J",
                                "\xe2\x80\xae"
                                "evil",
                                "\t\r\x07\x7f",
                                "plain ≥ ×"};

}  // namespace

BOOST_AUTO_TEST_SUITE(safe_text)

BOOST_AUTO_TEST_CASE(keeps_printable_text) {
  for (const std::string s :
       {"naive_recurrent gla fp64 B1 T64", "rel_l2 ≥ 1e-3 × 2 — é 日本 🙂",
        "C:\\path\\x1b is a backslash", "`a|b`"}) {
    BOOST_TEST(console_safe(s) == s);
    BOOST_TEST(json_safe(s) == s);
  }
}

BOOST_AUTO_TEST_CASE(escapes_controls_and_invalid_bytes) {
  BOOST_TEST(console_safe("\x1b[31mRED\x1b[0m") == "\\x1b[31mRED\\x1b[0m");
  BOOST_TEST(console_safe("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  BOOST_TEST(console_safe("nul\0!"s) == "nul\\x00!");
  BOOST_TEST(console_safe("bell\x07 del\x7f") == "bell\\x07 del\\x7f");
  BOOST_TEST(console_safe("\xff\xfe end") == "\\xff\\xfe end");
  BOOST_TEST(console_safe("\xc0\xaf") == "\\xc0\\xaf");                    // overlong '/'
  BOOST_TEST(console_safe("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // a surrogate
  BOOST_TEST(console_safe("x\xe2\x89") == "x\\xe2\\x89");                  // cut short
  BOOST_TEST(console_safe("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // > U+10FFFF
  BOOST_TEST(console_safe("\x80 lone") == "\\x80 lone");
  BOOST_TEST(console_safe("\xc2\x9b"
                          "2J") == "\\u009b2J");  // C1 CSI
  BOOST_TEST(console_safe("\xe2\x80\xae"
                          "abc") == "\\u202eabc");  // right-to-left override
  BOOST_TEST(console_safe("a\xe2\x80\xa8"
                          "b") == "a\\u2028b");  // line separator
  BOOST_TEST(json_safe("\x1b[31m\n\xff") == "\\x1b[31m\\n\\xff");
}

BOOST_AUTO_TEST_CASE(results_are_clean_and_stable) {
  for (const auto& s : kHostile) {
    BOOST_TEST_CONTEXT(console_safe(s)) {
      const std::string once = console_safe(s);
      BOOST_TEST(!has_control_or_invalid(once));
      BOOST_TEST(console_safe(once) == once);  // escaping twice changes nothing
      BOOST_TEST(json_safe(s) == once);
    }
  }
}

BOOST_AUTO_TEST_CASE(json_tree_is_writable) {
  nlohmann::json j = {{"message", "boom \xff\n\x1b[31m"},
                      {"rows", {"ok", "\xfe"}},
                      {"nested",
                       {{"bad\xff"
                         "key",
                         "v\x01"},
                        {"n", 1.5},
                        {"b", true}}}};
  // Unescaped, nlohmann refuses to write it: the crash this guards against.
  BOOST_CHECK_THROW((void)j.dump(), nlohmann::json::type_error);
  BOOST_TEST(!json_is_safe(j));
  BOOST_TEST(!json_is_safe(nlohmann::json{{"ok",
                                           {{"bad\xff"
                                             "key",
                                             1}}}}));  // a key alone
  const nlohmann::json safe = json_safe_tree(j);
  BOOST_TEST(json_is_safe(safe));
  BOOST_TEST(json_is_safe(nlohmann::json{{"k", {"≥ é", 1, nullptr, "a\\x1b"}}}));
  const nlohmann::json back = nlohmann::json::parse(safe.dump());
  BOOST_TEST(back["message"] == "boom \\xff\\n\\x1b[31m");
  BOOST_TEST(back["rows"][1] == "\\xfe");
  BOOST_TEST(back["nested"]["bad\\xffkey"] == "v\\x01");
  BOOST_TEST(back["nested"]["n"] == 1.5);
  BOOST_TEST(back["nested"]["b"] == true);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(output_files)

BOOST_AUTO_TEST_CASE(write_json_file_stores_hostile_strings_as_valid_json) {
  const fs::path dir = fresh_dir("hostile_json");
  const fs::path out = dir / "r.json";
  write_json_file(out.string(), {{"message", "hostile \x1b[31mRED\x1b[0m\nFORGED\n\xff\xfe end"}});
  const nlohmann::json back = nlohmann::json::parse(slurp(out));
  BOOST_TEST(back["message"] == "hostile \\x1b[31mRED\\x1b[0m\\nFORGED\\n\\xff\\xfe end");
  BOOST_TEST(entries(dir) == std::set<std::string>{"r.json"});  // no temporary left
  // Permissions follow the umask like any new file, not mkstemp's 0600.
  const mode_t mask = umask(0);
  umask(mask);
  BOOST_TEST(static_cast<unsigned>(fs::status(out).permissions() & fs::perms::all) ==
             static_cast<unsigned>(0666 & ~mask));
}

BOOST_AUTO_TEST_CASE(planted_symlinks_are_never_followed) {
  const fs::path dir = fresh_dir("planted");
  const fs::path victim = dir / "victim.txt";
  spit(victim, "precious\n");
  // Links at every name the old scheme (path + ".tmp-" + pid) could use near this pid,
  // and at the target itself.
  std::set<std::string> planted;
  for (int pid = std::max(1, int(getpid()) - 50); pid <= int(getpid()) + 50; ++pid) {
    const std::string name = "out.json.tmp-" + std::to_string(pid);
    fs::create_symlink(victim, dir / name);
    planted.insert(name);
  }
  fs::create_symlink(victim, dir / "out.json");
  write_json_file((dir / "out.json").string(), {{"k", 1}});
  BOOST_TEST(slurp(victim) == "precious\n");
  BOOST_TEST(!fs::is_symlink(dir / "out.json"));  // the link at the target was replaced
  BOOST_TEST(nlohmann::json::parse(slurp(dir / "out.json"))["k"] == 1);
  std::set<std::string> want = planted;
  want.insert({"victim.txt", "out.json"});
  BOOST_TEST((entries(dir) == want));  // the planted links untouched, no temporary left
  for (const auto& name : planted) BOOST_TEST(fs::read_symlink(dir / name) == victim);
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_nothing_behind) {
  const fs::path dir = fresh_dir("failed_write");
  fs::create_directory(dir / "taken");  // a folder where the file should go
  spit(dir / "taken" / "inside", "keep");
  const std::string why = message_of([&] {
    write_json_file((dir / "taken").string(), {{"k", 1}});
  });
  BOOST_TEST(why.find((dir / "taken").string()) != std::string::npos, why);
  BOOST_TEST(why.find("cannot write") != std::string::npos, why);
  BOOST_TEST(entries(dir) == std::set<std::string>{"taken"});
  BOOST_TEST(slurp(dir / "taken" / "inside") == "keep");
  // A folder that does not exist: refused, nothing created.
  BOOST_CHECK_THROW(write_json_file((dir / "no" / "x.json").string(), {{"k", 1}}),
                    std::runtime_error);
  BOOST_TEST(!fs::exists(dir / "no"));
}

BOOST_AUTO_TEST_CASE(check_output_path_names_the_path_and_the_rule) {
  const fs::path dir = fresh_dir("check");
  spit(dir / "existing.json", "{}");
  BOOST_CHECK_NO_THROW(check_output_path((dir / "new.json").string(), "--json"));
  BOOST_CHECK_NO_THROW(check_output_path((dir / "existing.json").string(), "--json"));
  BOOST_TEST((entries(dir) == std::set<std::string>{"existing.json"}));  // the probe left nothing

  const std::string missing = (dir / "nonexistent" / "x.json").string();
  std::string why = message_of([&] { check_output_path(missing, "--json"); });
  BOOST_TEST(why.find("--json " + missing) != std::string::npos, why);
  BOOST_TEST(why.find("does not exist") != std::string::npos, why);
  BOOST_TEST(!fs::exists(dir / "nonexistent"));

  why = message_of([&] { check_output_path(dir.string(), "--json"); });
  BOOST_TEST(why.find("is a folder") != std::string::npos, why);
  why = message_of([&] { check_output_path(dir.string() + "/", "--json"); });
  BOOST_TEST(why.find("names a folder") != std::string::npos, why);
  why =
      message_of([&] { check_output_path((dir / "existing.json" / "x.json").string(), "--json"); });
  BOOST_TEST(why.find("is not a folder") != std::string::npos, why);
  why = message_of([&] { check_output_path("/dev/null", "--json"); });
  BOOST_TEST(why.find("not a regular file") != std::string::npos, why);
  // A place where no file can be made, even by root.
  why = message_of([&] { check_output_path("/proc/glabench.json", "--json"); });
  BOOST_TEST(why.find("cannot create a file in /proc") != std::string::npos, why);
  BOOST_CHECK_THROW(check_output_path("", "--json"), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(report_folder_rule) {
  const fs::path dir = fresh_dir("report_rule");
  BOOST_TEST(report_dir_refusal((dir / "absent").string()) == "");
  fs::create_directory(dir / "empty");
  BOOST_TEST(report_dir_refusal((dir / "empty").string()) == "");
  fs::create_directory(dir / "report");
  for (const char* f : {"report.md", "plots.json", "time_vs_t.png"}) spit(dir / "report" / f, "x");
  BOOST_TEST(report_dir_refusal((dir / "report").string()) == "");
  spit(dir / "report" / "notes.txt", "mine");
  BOOST_TEST(report_dir_refusal((dir / "report").string()).find("'notes.txt'") !=
             std::string::npos);
  fs::create_directory(dir / "half");
  spit(dir / "half" / "report.md", "x");
  BOOST_TEST(report_dir_refusal((dir / "half").string()).find("not a glabench report folder") !=
             std::string::npos);
  spit(dir / "file", "x");
  BOOST_TEST(report_dir_refusal((dir / "file").string()) == "exists and is not a folder");
  fs::create_directory_symlink(dir / "empty", dir / "link");
  BOOST_TEST(report_dir_refusal((dir / "link").string()).find("symbolic link") !=
             std::string::npos);
  BOOST_CHECK_THROW(check_report_dir((dir / "report").string(), "--out"), std::invalid_argument);
  BOOST_CHECK_THROW(check_report_dir((dir / "no" / "r").string(), "--out"), std::invalid_argument);
  BOOST_CHECK_NO_THROW(check_report_dir((dir / "new").string(), "--out"));
  BOOST_CHECK_NO_THROW(check_report_dir((dir / "empty").string() + "/", "--out"));
  BOOST_TEST(!fs::exists(dir / "new"));
}

BOOST_AUTO_TEST_CASE(staged_folder_appears_whole_or_not_at_all) {
  const fs::path dir = fresh_dir("staged");
  const fs::path target = dir / "report";
  {  // Not published: nothing is left.
    staged_dir staged(target.string());
    BOOST_TEST(fs::is_directory(staged.path()));
    BOOST_TEST(fs::path(staged.path()).parent_path() == dir);
    spit(fs::path(staged.path()) / "report.md", "half");
  }
  BOOST_TEST(entries(dir).empty());
  {  // Published into a fresh place.
    staged_dir staged(target.string());
    spit(fs::path(staged.path()) / "report.md", "first");
    spit(fs::path(staged.path()) / "plots.json", "{}");
    spit(fs::path(staged.path()) / "old.png", "png");
    staged.publish();
  }
  BOOST_TEST(entries(dir) == std::set<std::string>{"report"});
  BOOST_TEST(slurp(target / "report.md") == "first");
  const mode_t mask = umask(0);
  umask(mask);
  BOOST_TEST(static_cast<unsigned>(fs::status(target).permissions() & fs::perms::all) ==
             static_cast<unsigned>(0777 & ~mask));  // not mkdtemp's 0700
  {  // A report folder is replaced whole: old.png does not survive.
    staged_dir staged(target.string());
    spit(fs::path(staged.path()) / "report.md", "second");
    spit(fs::path(staged.path()) / "plots.json", "{}");
    staged.publish();
  }
  BOOST_TEST(entries(dir) == std::set<std::string>{"report"});
  BOOST_TEST((entries(target) == std::set<std::string>{"report.md", "plots.json"}));
  BOOST_TEST(slurp(target / "report.md") == "second");
  {  // Someone put their own file in meanwhile: refused, theirs kept, staging removed.
    staged_dir staged(target.string());
    spit(fs::path(staged.path()) / "report.md", "third");
    spit(target / "mine.txt", "mine");
    BOOST_CHECK_THROW(staged.publish(), std::runtime_error);
  }
  BOOST_TEST(entries(dir) == std::set<std::string>{"report"});
  BOOST_TEST(slurp(target / "report.md") == "second");
  BOOST_TEST(slurp(target / "mine.txt") == "mine");
}

BOOST_AUTO_TEST_SUITE_END()
