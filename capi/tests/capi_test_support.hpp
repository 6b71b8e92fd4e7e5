// What the C++ tests of the C API share: a closed spanning state of a model, made through the C
// API itself.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "clusterdyn.h"

namespace capi_test {

/// A closed spanning state (q: nq, v: nv) of model m, made through the C API on workspace ws:
/// the independent coordinates y of the reference configuration, each moved by
/// shift * sin(1 + i) (a floating base, the first 7 of y when nyq > ny, kept: its quaternion
/// stays unit), velocities ydot_i = 0.4 - 0.07 i, closed by cdyn_independent_to_spanning.
inline void closedState(const cdyn_model* m, cdyn_workspace* ws, double shift,
                        std::vector<double>* q, std::vector<double>* v) {
  int nq = 0, nv = 0, nyq = 0, ny = 0;
  cdyn_model_nq(m, &nq);
  cdyn_model_nv(m, &nv);
  cdyn_model_nyq(m, &nyq);
  cdyn_model_ny(m, &ny);
  q->assign(nq, 0.0);
  v->assign(nv, 0.0);
  std::vector<double> y(nyq), ydot(ny);
  cdyn_model_reference_configuration(m, q->data(), nq);
  EXPECT_EQ(cdyn_spanning_to_independent(m, ws, q->data(), nq, v->data(), nv, y.data(), nyq,
                                         ydot.data(), ny),
            CDYN_OK);
  if (shift != 0.0) {  // off the reference pose
    for (int i = nyq > ny ? 7 : 0; i < nyq; ++i) y[i] += shift * std::sin(1.0 + i);
  }
  for (int i = 0; i < ny; ++i) ydot[i] = 0.4 - 0.07 * i;
  EXPECT_EQ(cdyn_independent_to_spanning(m, ws, y.data(), nyq, ydot.data(), ny, q->data(), nq,
                                         q->data(), nq, v->data(), nv),
            CDYN_OK)
      << cdyn_workspace_last_error(ws);
}

}  // namespace capi_test
