/* clusterdyn C API example: load a robot, query it, run forward and inverse dynamics.
 * Usage: example_c path/to/robot.urdf                                                  */
#include <clusterdyn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints the message of a failed call and exits. */
static void check(cdyn_status s, const cdyn_workspace* ws, const char* what) {
  if (s == CDYN_OK) return;
  fprintf(stderr, "%s failed: %s: %s\n", what, cdyn_status_string(s),
          ws ? cdyn_workspace_last_error(ws) : "");
  exit(1);
}

int main(int argc, char** argv) {
  char err[512];
  cdyn_model* model = NULL;
  cdyn_workspace* ws = NULL;
  int nq, nv, nframes, i;
  const char* name;
  double *q, *v, *tau, *ddq, *tau2;
  double R[9], p[3], max_err = 0.0;

  if (argc < 2) {
    fprintf(stderr, "usage: %s robot.urdf\n", argv[0]);
    return 2;
  }
  /* 1. Load the model (the header's ABI version is checked) and make a workspace. */
  if (cdyn_model_load(CDYN_ABI_VERSION, argv[1], 0, NULL, &model, err, sizeof err) != CDYN_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], err);
    return 1;
  }
  check(cdyn_workspace_create(model, &ws), NULL, "cdyn_workspace_create");

  /* 2. Sizes and names. */
  check(cdyn_model_nq(model, &nq), ws, "cdyn_model_nq");
  check(cdyn_model_nv(model, &nv), ws, "cdyn_model_nv");
  check(cdyn_model_nframes(model, &nframes), ws, "cdyn_model_nframes");
  check(cdyn_model_name(model, &name), ws, "cdyn_model_name");
  printf("robot %s (clusterdyn %s): nq = %d, nv = %d, %d frames\n", name, cdyn_version_string(), nq,
         nv, nframes);

  /* 3. A state: neutral configuration, every velocity 0.5 rad/s (or m/s), torques 1. */
  q = malloc(sizeof(double) * (size_t)nq);
  v = malloc(sizeof(double) * (size_t)nv);
  tau = malloc(sizeof(double) * (size_t)nv);
  ddq = malloc(sizeof(double) * (size_t)nv);
  tau2 = malloc(sizeof(double) * (size_t)nv);
  check(cdyn_neutral_configuration(model, ws, q, nq), ws, "cdyn_neutral_configuration");
  for (i = 0; i < nv; ++i) {
    v[i] = 0.5;
    tau[i] = 1.0;
  }
  check(cdyn_integrate(model, ws, q, nq, v, nv, 0.2, q, nq), ws, "cdyn_integrate");

  /* 4. Where is the last frame? (forward kinematics, then the frame query) */
  check(cdyn_forward_kinematics(model, ws, q, nq, NULL, 0, NULL, 0), ws, "forward kinematics");
  check(cdyn_frame_placement(model, ws, nframes - 1, R, 3, p), ws, "cdyn_frame_placement");
  check(cdyn_model_frame_name(model, nframes - 1, &name), ws, "cdyn_model_frame_name");
  printf("frame %s at (%.6f, %.6f, %.6f) m\n", name, p[0], p[1], p[2]);

  /* 5. Forward dynamics, then inverse dynamics of the result: must give tau back. */
  check(cdyn_aba(model, ws, q, nq, v, nv, tau, nv, NULL, 0, ddq, nv), ws, "cdyn_aba");
  check(cdyn_rnea(model, ws, q, nq, v, nv, ddq, nv, NULL, 0, tau2, nv), ws, "cdyn_rnea");
  for (i = 0; i < nv; ++i) max_err = fmax(max_err, fabs(tau2[i] - tau[i]));
  printf("ddq[0] = %.9f, max |rnea(aba(tau)) - tau| = %.3g\n", nv > 0 ? ddq[0] : 0.0, max_err);

  /* 6. Errors are values: a wrong length is reported, nothing crashes. */
  if (cdyn_aba(model, ws, q, nq - 1, v, nv, tau, nv, NULL, 0, ddq, nv) == CDYN_ERR_INVALID_SIZE)
    printf("expected error: %s\n", cdyn_workspace_last_error(ws));

  free(q);
  free(v);
  free(tau);
  free(ddq);
  free(tau2);
  check(cdyn_workspace_free(ws), NULL, "cdyn_workspace_free");
  check(cdyn_model_free(model), NULL, "cdyn_model_free");
  return max_err < 1e-9 ? 0 : 1;
}
