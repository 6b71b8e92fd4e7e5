/* Uses libclusterdyn.so.0 through dlopen/dlsym only (this program is not linked with it):
 * loads a robot, runs forward dynamics and checks inverse dynamics gives tau back.
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
  int nq = 0, nv = 0, i;
  double *q, *v, *tau, *ddq, *tau2, max_err = 0.0;
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
  ((ws_free_fn)sym(lib, "cdyn_workspace_free"))(ws);
  ((model_free_fn)sym(lib, "cdyn_model_free"))(model);
  free(q);
  free(v);
  free(tau);
  free(ddq);
  free(tau2);
  dlclose(lib);
  return max_err < 1e-9 * (1.0 + nv) ? 0 : 1;
}
