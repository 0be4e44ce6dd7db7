#define BOOST_TEST_MODULE glabench harness
#include <boost/test/unit_test.hpp>
