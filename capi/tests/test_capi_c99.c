/* The header compiles as strict C99 (-std=c99 -pedantic-errors -Wall -Wextra -Werror) and the
 * library works from C: a model from an in-memory string, a workspace in caller memory,
 * kinematics and dynamics of a 1-dof pendulum checked against the closed form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterdyn.h"

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* A point mass m = 2 kg at distance l = 0.5 m from a revolute joint about y. */
static const char* kPendulum =
    "<robot name=\"pendulum\"><link name=\"base\"/>"
    "<link name=\"arm\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"2\"/>"
    "<inertia ixx=\"0\" iyy=\"0\" izz=\"0\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"
    "<joint name=\"hinge\" type=\"continuous\"><parent link=\"base\"/><child link=\"arm\"/>"
    "<axis xyz=\"0 1 0\"/></joint></robot>";

int main(void) {
  char err[256];
  cdyn_model* model = NULL;
  cdyn_workspace* ws = NULL;
  void* mem;
  size_t size = 0;
  int nq = 0, nv = 0, frame = -1, type = -1;
  double q[1] = {0.3}, v[1] = {0.0}, tau[1] = {0.0}, ddq[1], M[1], p[3], R[9];
  const double g = 9.81, m = 2.0, l = 0.5;

  CHECK(cdyn_check_version(CDYN_ABI_VERSION) == CDYN_OK);
  CHECK(cdyn_version() == CDYN_VERSION_NUMBER);
  CHECK(cdyn_model_load_string(CDYN_ABI_VERSION, kPendulum, strlen(kPendulum), 0, NULL, &model, err,
                               sizeof err) == CDYN_OK);
  if (!model) {
    fprintf(stderr, "load failed: %s\n", err);
    return 1;
  }
  CHECK(cdyn_model_nq(model, &nq) == CDYN_OK && nq == 1);
  CHECK(cdyn_model_nv(model, &nv) == CDYN_OK && nv == 1);
  CHECK(cdyn_model_joint_type(model, 0, &type) == CDYN_OK && type == CDYN_JOINT_REVOLUTE);
  CHECK(cdyn_model_frame_index(model, "arm", &frame) == CDYN_OK);

  CHECK(cdyn_workspace_size(model, &size) == CDYN_OK);
  mem = malloc(size);
  CHECK(cdyn_workspace_init_in(model, mem, size, &ws) == CDYN_OK);

  /* M = m l^2, free fall from angle q: ddq = -g sin(q) / l (rotation about +y lifts -z). */
  CHECK(cdyn_crba(model, ws, q, 1, M, 1) == CDYN_OK);
  CHECK(fabs(M[0] - m * l * l) < 1e-12);
  CHECK(cdyn_aba(model, ws, q, 1, v, 1, tau, 1, NULL, 0, ddq, 1) == CDYN_OK);
  CHECK(fabs(ddq[0] + g * sin(q[0]) / l) < 1e-12);
  /* The arm frame turns with the joint: its x axis is (cos q, 0, -sin q). */
  CHECK(cdyn_forward_kinematics(model, ws, q, 1, NULL, 0, NULL, 0) == CDYN_OK);
  CHECK(cdyn_frame_placement(model, ws, frame, R, 3, p) == CDYN_OK);
  CHECK(fabs(R[0] - cos(q[0])) < 1e-15 && fabs(R[2] + sin(q[0])) < 1e-15);
  /* Errors from C. */
  CHECK(cdyn_aba(model, ws, q, 2, v, 1, tau, 1, NULL, 0, ddq, 1) == CDYN_ERR_INVALID_SIZE);
  CHECK(strcmp(cdyn_workspace_last_error(ws), "q has length 2, expected 1") == 0);
  CHECK(strcmp(cdyn_status_string(CDYN_ERR_NULL_POINTER), "null pointer") == 0);

  CHECK(cdyn_workspace_free(ws) == CDYN_OK);
  free(mem);
  CHECK(cdyn_model_free(model) == CDYN_OK);
  if (failures == 0) printf("C99 test passed\n");
  return failures ? 1 : 0;
}
