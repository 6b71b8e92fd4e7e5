/* Uses libclusterdyn.so.0 through dlopen/dlsym only (this program is not linked with it):
 * loads a robot, runs forward dynamics and checks inverse dynamics gives tau back, on the
 * spanning tree (ABA / RNEA) and in independent coordinates on a closed state (CE-ABA /
 * CE-RNEA, the robot's loops included).
 * Usage: test_capi_dlopen path/to/libclusterdyn.so.0 robot.urdf */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clusterdyn.h" /* types and constants only: every function is looked up */

typedef cdyn_status (*load_fn)(int, const char*, unsigned int, const double*, cdyn_model**, char*,
                               size_t);
typedef cdyn_status (*model_int_fn)(const cdyn_model*, int*);
typedef cdyn_status (*ws_create_fn)(const cdyn_model*, cdyn_workspace**);
typedef cdyn_status (*ws_free_fn)(cdyn_workspace*);
typedef cdyn_status (*model_free_fn)(cdyn_model*);
typedef cdyn_status (*neutral_fn)(const cdyn_model*, cdyn_workspace*, double*, int);
typedef cdyn_status (*integrate_fn)(const cdyn_model*, cdyn_workspace*, const double*, int,
                                    const double*, int, double, double*, int);
typedef cdyn_status (*dyn_fn)(const cdyn_model*, cdyn_workspace*, const double*, int, const double*,
                              int, const double*, int, const double*, int, double*, int);
typedef int (*version_fn)(void);
typedef cdyn_status (*ref_config_fn)(const cdyn_model*, double*, int);
typedef cdyn_status (*to_independent_fn)(const cdyn_model*, cdyn_workspace*, const double*, int,
                                         const double*, int, double*, int, double*, int);
typedef cdyn_status (*to_spanning_fn)(const cdyn_model*, cdyn_workspace*, const double*, int,
                                      const double*, int, const double*, int, double*, int, double*,
                                      int);
typedef cdyn_status (*ce_fn)(const cdyn_model*, cdyn_workspace*, const double*, int, const double*,
                             int, const double*, int, const double*, int, double*, int, double*,
                             int);
typedef const char* (*last_error_fn)(const cdyn_workspace*);

static void* sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
    exit(1);
  }
  return p;
}

int main(int argc, char** argv) {
  void* lib;
  char err[512];
  cdyn_model* model = NULL;
  cdyn_workspace* ws = NULL;
  int nq = 0, nv = 0, ny = 0, nyq = 0, i;
  double *q, *v, *tau, *ddq, *tau2, max_err = 0.0, max_err_ce = 0.0;
  double *qc, *vc, *y, *ydot, *tauy, *ydd, *tauy2;
  ce_fn ce_aba, ce_rnea;
  last_error_fn last_error;
  load_fn load;
  dyn_fn aba, rnea;

  if (argc < 3) {
    fprintf(stderr, "usage: %s libclusterdyn.so.0 robot.urdf\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  *(void**)(&load) = sym(lib, "cdyn_model_load");
  *(void**)(&aba) = sym(lib, "cdyn_aba");
  *(void**)(&rnea) = sym(lib, "cdyn_rnea");
  if (((version_fn)sym(lib, "cdyn_version"))() != CDYN_VERSION_NUMBER) {
    fprintf(stderr, "library version differs from the header\n");
    return 1;
  }
  if (load(CDYN_ABI_VERSION, argv[2], 0, NULL, &model, err, sizeof err) != CDYN_OK) {
    fprintf(stderr, "load: %s\n", err);
    return 1;
  }
  ((model_int_fn)sym(lib, "cdyn_model_nq"))(model, &nq);
  ((model_int_fn)sym(lib, "cdyn_model_nv"))(model, &nv);
  ((model_int_fn)sym(lib, "cdyn_model_ny"))(model, &ny);
  ((model_int_fn)sym(lib, "cdyn_model_nyq"))(model, &nyq);
  *(void**)(&ce_aba) = sym(lib, "cdyn_ce_aba");
  *(void**)(&ce_rnea) = sym(lib, "cdyn_ce_rnea");
  *(void**)(&last_error) = sym(lib, "cdyn_workspace_last_error");
  if (((ws_create_fn)sym(lib, "cdyn_workspace_create"))(model, &ws) != CDYN_OK) return 1;
  q = calloc((size_t)nq, sizeof(double));
  v = calloc((size_t)nv, sizeof(double));
  tau = calloc((size_t)nv, sizeof(double));
  ddq = calloc((size_t)nv, sizeof(double));
  tau2 = calloc((size_t)nv, sizeof(double));
  for (i = 0; i < nv; ++i) {
    v[i] = sin(1.0 + i);
    tau[i] = cos(2.0 * i);
  }
  ((neutral_fn)sym(lib, "cdyn_neutral_configuration"))(model, ws, q, nq);
  ((integrate_fn)sym(lib, "cdyn_integrate"))(model, ws, q, nq, v, nv, 0.5, q, nq);
  if (aba(model, ws, q, nq, v, nv, tau, nv, NULL, 0, ddq, nv) != CDYN_OK) return 1;
  if (rnea(model, ws, q, nq, v, nv, ddq, nv, NULL, 0, tau2, nv) != CDYN_OK) return 1;
  for (i = 0; i < nv; ++i) max_err = fmax(max_err, fabs(tau2[i] - tau[i]));
  printf("%s: nq = %d, nv = %d, max |rnea(aba(tau)) - tau| = %.3g\n", argv[2], nq, nv, max_err);

  /* Independent coordinates: a closed state from the reference configuration's y and a
   * velocity ydot, then CE-ABA and CE-RNEA. */
  qc = calloc((size_t)nq, sizeof(double));
  vc = calloc((size_t)nv, sizeof(double));
  y = calloc((size_t)nyq + 1, sizeof(double));
  ydot = calloc((size_t)ny + 1, sizeof(double));
  tauy = calloc((size_t)ny + 1, sizeof(double));
  ydd = calloc((size_t)ny + 1, sizeof(double));
  tauy2 = calloc((size_t)ny + 1, sizeof(double));
  ((ref_config_fn)sym(lib, "cdyn_model_reference_configuration"))(model, qc, nq);
  ((to_independent_fn)sym(lib, "cdyn_spanning_to_independent"))(model, ws, qc, nq, vc, nv, y, nyq,
                                                                ydot, ny);
  for (i = 0; i < ny; ++i) {
    ydot[i] = 0.5 * sin(0.7 * i);
    tauy[i] = cos(1.0 + i);
  }
  if (((to_spanning_fn)sym(lib, "cdyn_independent_to_spanning"))(model, ws, y, nyq, ydot, ny, NULL,
                                                                 0, qc, nq, vc, nv) != CDYN_OK ||
      ce_aba(model, ws, qc, nq, vc, nv, tauy, ny, NULL, 0, ydd, ny, NULL, 0) != CDYN_OK ||
      ce_rnea(model, ws, qc, nq, vc, nv, ydd, ny, NULL, 0, tauy2, ny, NULL, 0) != CDYN_OK) {
    fprintf(stderr, "cluster call failed: %s\n", last_error(ws));
    return 1;
  }
  for (i = 0; i < ny; ++i) max_err_ce = fmax(max_err_ce, fabs(tauy2[i] - tauy[i]));
  printf("%s: ny = %d, nyq = %d, max |ce_rnea(ce_aba(tau)) - tau| = %.3g\n", argv[2], ny, nyq,
         max_err_ce);
  free(qc);
  free(vc);
  free(y);
  free(ydot);
  free(tauy);
  free(ydd);
  free(tauy2);
  ((ws_free_fn)sym(lib, "cdyn_workspace_free"))(ws);
  ((model_free_fn)sym(lib, "cdyn_model_free"))(model);
  free(q);
  free(v);
  free(tau);
  free(ddq);
  free(tau2);
  dlclose(lib);
  return max_err < 1e-9 * (1.0 + nv) && max_err_ce < 1e-9 * (1.0 + ny) ? 0 : 1;
}
