#define BOOST_TEST_MODULE glabench reference
#include <boost/test/unit_test.hpp>
