#include <doctest/doctest.h>

#include <stdexcept>

#include "env/sim/batch_time_model.hpp"

using env::BatchTimeModel;

TEST_CASE("linear model from LBB Table 2 evaluates a0 + a1 B") {
  const BatchTimeModel gtx750({51.0, 2.671});
  CHECK(gtx750.eval(128) == doctest::Approx(51.0 + 2.671 * 128));
  CHECK(gtx750.eval(0) == 0.0);
}

TEST_CASE("cubic fit recovers the polynomial that made the points") {
  std::vector<env::BatchTimePoint> points;
  for (int b : {2, 4, 8, 16, 32, 64, 128, 256}) points.push_back({double(b), 3.0 + 0.5 * b + 1e-3 * b * b + 2e-6 * b * b * b});
  const auto model = BatchTimeModel::fit(points, 3);
  REQUIRE(model.coefficients().size() == 4);
  CHECK(model.coefficients()[0] == doctest::Approx(3.0).epsilon(1e-6));
  CHECK(model.coefficients()[1] == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(model.valid_up_to() == 256);
  CHECK(model.eval(100) == doctest::Approx(3.0 + 50 + 10 + 2.0));
}

TEST_CASE("a fit that turns down is made monotone and continued linearly past its range") {
  // 10 + 2B - 0.01 B^2 peaks at B = 100 and falls after it.
  const BatchTimeModel model({10.0, 2.0, -0.01}, 150);
  CHECK(model.first_decrease(150) == 101);
  CHECK(model.eval(120) == doctest::Approx(model.polynomial(100)));
  CHECK(model.eval(150) >= model.eval(120));
  CHECK(model.eval(300) >= model.eval(150));
  double previous = 0;
  for (int b = 1; b <= 400; ++b) {
    CHECK(model.eval(b) >= previous);
    previous = model.eval(b);
  }
}

TEST_CASE("bad fits are rejected with a reason") {
  CHECK_THROWS_AS(BatchTimeModel(std::vector<double>{}), std::invalid_argument);
  CHECK_THROWS_AS(BatchTimeModel::fit({{0, 1}}, 3), std::invalid_argument);
}
