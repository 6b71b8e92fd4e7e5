"""ctypes signatures of the clusterdyn C API: the structs of clusterdyn.h as Structures, and
SIGNATURES, {function: (restype, [argtypes])} of every function of clusterdyn.h in header order.
GENERATED from capi/clusterdyn.h by capi/generate_ctypes.py: do not edit, change the header and
run `python3 capi/generate_ctypes.py` (docs/design/c-layer.md, "How to add a C function").
_library.py declares them on the loaded library."""
import ctypes as C

_int = C.c_int  # int, a C enum
_uint = C.c_uint  # unsigned int
_double = C.c_double  # double
_size = C.c_size_t  # size_t
_H = C.c_void_p  # an opaque handle (cdyn_model*, ...) or a void*
_HP = C.POINTER(C.c_void_p)  # a created handle (cdyn_x**), an array of handles
_str = C.c_char_p  # a string (const char*) or a text buffer (char*)
_S = C.POINTER(C.c_char_p)  # a returned name (const char**)
_D = C.POINTER(C.c_double)  # double*, double x[N]
_I = C.POINTER(C.c_int)  # int*
_Z = C.POINTER(C.c_size_t)  # size_t*


class ProximalSettings(C.Structure):
    """cdyn_proximal_settings (clusterdyn.h)."""
    _fields_ = [("mu", C.c_double), ("tolerance", C.c_double), ("max_iterations", C.c_int),
                ("warm_start", C.c_int)]


class ProximalResult(C.Structure):
    """cdyn_proximal_result (clusterdyn.h)."""
    _fields_ = [("status", C.c_int), ("iterations", C.c_int), ("residual", C.c_double),
                ("dual_step", C.c_double), ("converged", C.c_int)]


class ContactSettings(C.Structure):
    """cdyn_contact_settings (clusterdyn.h)."""
    _fields_ = [("dt", C.c_double), ("beta", C.c_double), ("max_push_velocity", C.c_double),
                ("activation_distance", C.c_double), ("tolerance", C.c_double), ("rho", C.c_double),
                ("solver", C.c_int), ("max_iterations", C.c_int), ("warm_start", C.c_int),
                ("polish_after", C.c_int), ("active_set_steps", C.c_int)]


class ContactReport(C.Structure):
    """cdyn_contact_report (clusterdyn.h)."""
    _fields_ = [("status", C.c_int), ("iterations", C.c_int), ("converged", C.c_int),
                ("active_contacts", C.c_int), ("primal_residual", C.c_double),
                ("dual_residual", C.c_double), ("complementarity", C.c_double), ("rho", C.c_double)]


SIGNATURES = {
    # ---- Version and errors (thread-safe, never fail) --------------------------------------------
    "cdyn_version": (_int, []),
    "cdyn_version_string": (_str, []),
    "cdyn_check_version": (_int, [_int]),
    "cdyn_status_string": (_str, [_int]),
    "cdyn_last_error": (_str, []),
    # ---- Model: loading and freeing (allocate; thread-safe) --------------------------------------
    "cdyn_model_load": (_int, [_int, _str, _uint, _D, _HP, _str, _size]),
    "cdyn_model_load_string": (_int, [_int, _str, _size, _uint, _D, _HP, _str, _size]),
    "cdyn_model_load_string_dir": (_int, [_int, _str, _size, _str, _uint, _D, _HP, _str, _size]),
    "cdyn_model_free": (_int, [_H]),
    # ---- Model queries (no allocation; thread-safe). Strings returned through const char** are ---
    "cdyn_model_name": (_int, [_H, _S]),
    "cdyn_model_nbodies": (_int, [_H, _I]),
    "cdyn_model_nq": (_int, [_H, _I]),
    "cdyn_model_nv": (_int, [_H, _I]),
    "cdyn_model_nframes": (_int, [_H, _I]),
    "cdyn_model_total_mass": (_int, [_H, _D]),
    "cdyn_model_gravity": (_int, [_H, _D]),
    "cdyn_model_body_name": (_int, [_H, _int, _S]),
    "cdyn_model_body_index": (_int, [_H, _str, _I]),
    "cdyn_model_body_parent": (_int, [_H, _int, _I]),
    "cdyn_model_joint_name": (_int, [_H, _int, _S]),
    "cdyn_model_joint_index": (_int, [_H, _str, _I]),
    "cdyn_model_joint_type": (_int, [_H, _int, _I]),
    "cdyn_model_joint_coordinates": (_int, [_H, _int, _I, _I, _I, _I]),
    "cdyn_model_position_name": (_int, [_H, _int, _S]),
    "cdyn_model_velocity_name": (_int, [_H, _int, _S]),
    "cdyn_model_position_index": (_int, [_H, _str, _I]),
    "cdyn_model_velocity_index": (_int, [_H, _str, _I]),
    "cdyn_model_position_limits": (_int, [_H, _D, _D, _int]),
    "cdyn_model_velocity_limits": (_int, [_H, _D, _int]),
    "cdyn_model_effort_limits": (_int, [_H, _D, _int]),
    "cdyn_model_frame_name": (_int, [_H, _int, _S]),
    "cdyn_model_frame_index": (_int, [_H, _str, _I]),
    "cdyn_model_frame_body": (_int, [_H, _int, _I]),
    "cdyn_model_describe": (_int, [_H, _str, _size, _Z]),
    "cdyn_model_nwarnings": (_int, [_H, _I]),
    "cdyn_model_warnings": (_int, [_H, _str, _size, _Z]),
    # ---- Cluster tree and independent coordinates: queries (no allocation; thread-safe) ----------
    "cdyn_model_nclusters": (_int, [_H, _I]),
    "cdyn_model_ny": (_int, [_H, _I]),
    "cdyn_model_nyq": (_int, [_H, _I]),
    "cdyn_model_nloops": (_int, [_H, _I]),
    "cdyn_model_nrelations": (_int, [_H, _I]),
    "cdyn_model_independent_position_name": (_int, [_H, _int, _S]),
    "cdyn_model_independent_velocity_name": (_int, [_H, _int, _S]),
    "cdyn_model_independent_position_index": (_int, [_H, _str, _I]),
    "cdyn_model_independent_velocity_index": (_int, [_H, _str, _I]),
    "cdyn_model_independent_indices": (_int, [_H, _I, _int, _I, _int]),
    "cdyn_model_reference_configuration": (_int, [_H, _D, _int]),
    "cdyn_model_cluster_name": (_int, [_H, _int, _S]),
    "cdyn_model_cluster_index": (_int, [_H, _str, _I]),
    "cdyn_model_cluster_info": (_int, [_H, _int, _I, _I, _I, _I, _I]),
    "cdyn_model_cluster_coordinates": (_int, [_H, _int, _I, _I, _I, _I, _I, _I, _I, _I]),
    "cdyn_model_body_cluster": (_int, [_H, _int, _I]),
    "cdyn_model_describe_clusters": (_int, [_H, _str, _size, _Z]),
    "cdyn_model_cluster_tree_dot": (_int, [_H, _str, _size, _Z]),
    # ---- Workspaces ------------------------------------------------------------------------------
    "cdyn_workspace_create": (_int, [_H, _HP]),
    "cdyn_workspace_size": (_int, [_H, _Z]),
    "cdyn_workspace_init_in": (_int, [_H, _H, _size, _HP]),
    "cdyn_workspace_free": (_int, [_H]),
    "cdyn_workspace_last_error": (_str, [_H]),
    # ---- Logging (thread-safe; not real-time) ----------------------------------------------------
    "cdyn_set_log_level": (_int, [_int]),
    "cdyn_get_log_level": (_int, [_I]),
    # ---- Configuration space (compute functions: no allocation, no locks, no I/O) ----------------
    "cdyn_neutral_configuration": (_int, [_H, _H, _D, _int]),
    "cdyn_integrate": (_int, [_H, _H, _D, _int, _D, _int, _double, _D, _int]),
    "cdyn_normalize_configuration": (_int, [_H, _H, _D, _int]),
    "cdyn_integrate_independent": (_int, [_H, _H, _D, _int, _D, _int, _double, _D, _int]),
    "cdyn_difference_independent": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    # ---- Kinematics (compute functions) ----------------------------------------------------------
    "cdyn_forward_kinematics": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    "cdyn_frame_placement": (_int, [_H, _H, _int, _D, _int, _D]),
    "cdyn_frame_placement_matrix": (_int, [_H, _H, _int, _D, _int]),
    "cdyn_frame_velocity": (_int, [_H, _H, _int, _int, _D]),
    "cdyn_frame_acceleration": (_int, [_H, _H, _int, _int, _D]),
    "cdyn_frame_classical_acceleration": (_int, [_H, _H, _int, _int, _D]),
    "cdyn_frame_jacobian": (_int, [_H, _H, _int, _int, _D, _int]),
    "cdyn_compute_frame_jacobian": (_int, [_H, _H, _D, _int, _int, _int, _D, _int]),
    "cdyn_center_of_mass": (_int, [_H, _H, _D, _int, _D]),
    # ---- Dynamics on the spanning tree (compute functions) ---------------------------------------
    "cdyn_rnea": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_aba": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_crba": (_int, [_H, _H, _D, _int, _D, _int]),
    "cdyn_nonlinear_effects": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    "cdyn_generalized_gravity": (_int, [_H, _H, _D, _int, _D, _int]),
    "cdyn_kinetic_energy": (_int, [_H, _H, _D, _int, _D, _int, _D]),
    "cdyn_potential_energy": (_int, [_H, _H, _D, _int, _D]),
    # ---- Dynamics in independent coordinates: cluster tree, constraint embedding (compute functions) 
    "cdyn_ce_aba": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_ce_aba_spanning_forces": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                           _D, _int]),
    "cdyn_ce_aba_independent": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                       _int, _D, _int, _D, _int]),
    "cdyn_ce_rnea": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_cluster_mass_matrix": (_int, [_H, _H, _D, _int, _D, _int]),
    "cdyn_cluster_bias": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    # ---- Loop closure, coordinate conversions, constraint matrices (compute functions) -----------
    "cdyn_solve_loop_closure": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    "cdyn_independent_to_spanning": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                            _int]),
    "cdyn_spanning_to_independent": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_project_to_constraints": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_last_loop_closure": (_int, [_H, _H, _I, _D]),
    "cdyn_constraint_matrices": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int]),
    "cdyn_cluster_constraint_matrices": (_int, [_H, _H, _int, _D, _int, _D, _int, _D, _int, _D,
                                                _int]),
    # ---- Batched evaluation: many states per call, on several threads ----------------------------
    "cdyn_pool_create": (_int, [_H, _int, _HP]),
    "cdyn_pool_free": (_int, [_H]),
    "cdyn_pool_nthreads": (_int, [_H, _I]),
    "cdyn_pool_last_error": (_str, [_H]),
    "cdyn_batch_ce_aba": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                 _D, _int, _D, _int, _I]),
    "cdyn_batch_ce_aba_independent": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D,
                                             _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                             _D, _int, _I]),
    "cdyn_batch_ce_rnea": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                  _D, _int, _D, _int, _I]),
    "cdyn_batch_cluster_mass_matrix": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _I]),
    "cdyn_pool_ce_aba": (_int, [_H, _H, _int, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                _int, _D, _int, _I]),
    "cdyn_pool_ce_aba_independent": (_int, [_H, _H, _int, _int, _D, _int, _D, _int, _D, _int, _D,
                                            _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                            _I]),
    "cdyn_pool_ce_rnea": (_int, [_H, _H, _int, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                 _int, _D, _int, _I]),
    "cdyn_pool_cluster_mass_matrix": (_int, [_H, _H, _int, _int, _D, _int, _D, _int, _I]),
    "cdyn_forces_create": (_int, [_H, _HP]),
    "cdyn_forces_free": (_int, [_H]),
    "cdyn_forces_after_ce_aba": (_int, [_H, _H, _H, _D, _int, _int]),
    "cdyn_forces_after_ce_rnea": (_int, [_H, _H, _H]),
    "cdyn_forces_joint_wrenches": (_int, [_H, _H, _H, _int, _D, _int]),
    "cdyn_forces_loop_wrenches": (_int, [_H, _H, _D, _int]),
    "cdyn_forces_loop_rows": (_int, [_H, _H, _int, _D, _int]),
    "cdyn_forces_loop_info": (_int, [_H, _int, _S, _I, _I, _I, _D]),
    "cdyn_forces_coupling_info": (_int, [_H, _int, _S, _I]),
    "cdyn_forces_coupling_term": (_int, [_H, _int, _int, _I, _D]),
    "cdyn_forces_coupling": (_int, [_H, _H, _int, _D, _D, _int]),
    # ---- Constraints (contacts, welds, loops) and constrained dynamics ---------------------------
    "cdyn_proximal_settings_default": (_int, [C.POINTER(ProximalSettings)]),
    "cdyn_constraint_set_create": (_int, [_H, _HP]),
    "cdyn_constraint_set_create_cut_loops": (_int, [_H, _HP]),
    "cdyn_constraint_set_free": (_int, [_H]),
    "cdyn_constraint_set_last_error": (_str, [_H]),
    "cdyn_constraint_set_add": (_int, [_H, _str, _int, _int, _D, _int, _D, _int, _D, _I]),
    "cdyn_constraint_set_add_contact": (_int, [_H, _str, _int, _int, _str, _I]),
    "cdyn_constraint_set_size": (_int, [_H, _I]),
    "cdyn_constraint_set_nrows": (_int, [_H, _I]),
    "cdyn_constraint_set_constraint": (_int, [_H, _int, _S, _I, _I, _D, _I, _D, _I, _D, _I, _I]),
    "cdyn_constraint_set_row_name": (_int, [_H, _int, _S]),
    "cdyn_constraint_workspace_create": (_int, [_H, _H, _HP]),
    "cdyn_constraint_workspace_free": (_int, [_H]),
    "cdyn_constraint_workspace_last_error": (_str, [_H]),
    "cdyn_constraint_jacobian": (_int, [_H, _H, _D, _D, _int, _D, _int, _D]),
    "cdyn_constraint_kinematics": (_int, [_H, _H, _D, _D, _int, _D, _int, _D, _D]),
    "cdyn_delassus_matrix": (_int, [_H, _H, _D, _D, _int]),
    "cdyn_damped_delassus_inverse": (_int, [_H, _H, _D, _double, _D, _int]),
    "cdyn_constrained_aba": (_int, [_H, _H, _D, _D, _D, _D, C.POINTER(ProximalSettings), _D, _D, _D,
                                    _int, C.POINTER(ProximalResult)]),
    "cdyn_prox_pv": (_int, [_H, _H, _D, _D, _D, _D, C.POINTER(ProximalSettings), _D, _D, _D, _int,
                            C.POINTER(ProximalResult)]),
    "cdyn_constrained_dynamics_dense": (_int, [_H, _H, _D, _D, _D, _D, C.POINTER(ProximalSettings),
                                               _D, _D, _D, _int, C.POINTER(ProximalResult)]),
    "cdyn_constraint_wrenches": (_int, [_H, _H, _D, _int]),
    "cdyn_batch_constrained_dynamics": (_int, [_H, _HP, _int, _int, _int, _int, _D, _D, _D, _D,
                                               C.POINTER(ProximalSettings), _D, _D, _D, _int,
                                               C.POINTER(ProximalResult), _I]),
    "cdyn_pool_constrained_dynamics": (_int, [_H, _H, _HP, _int, _int, _int, _int, _D, _D, _D, _D,
                                              C.POINTER(ProximalSettings), _D, _D, _D, _int,
                                              C.POINTER(ProximalResult), _I]),
    # ---- Derivatives of the dynamics (derivative workspaces; compute functions) ------------------
    "cdyn_derivative_workspace_create": (_int, [_H, _HP]),
    "cdyn_derivative_workspace_free": (_int, [_H]),
    "cdyn_derivative_workspace_last_error": (_str, [_H]),
    "cdyn_rnea_derivatives": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                     _D, _D, _int]),
    "cdyn_aba_derivatives": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                    _D, _D, _int]),
    "cdyn_minverse": (_int, [_H, _H, _D, _int, _D, _int]),
    "cdyn_ce_rnea_derivatives": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                        _D, _D, _D, _int]),
    "cdyn_ce_aba_derivatives": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                       _D, _D, _int]),
    "cdyn_cluster_minverse": (_int, [_H, _H, _D, _int, _D, _int]),
    "cdyn_difference": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    "cdyn_batch_rnea_derivatives": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D, _int,
                                           _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _I]),
    "cdyn_batch_aba_derivatives": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D, _int,
                                          _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _I]),
    "cdyn_batch_ce_rnea_derivatives": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D,
                                              _int, _D, _int, _D, _int, _D, _int, _D, _int, _D,
                                              _int, _I]),
    "cdyn_batch_ce_aba_derivatives": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _D,
                                             _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                             _I]),
    "cdyn_batch_minverse": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _I]),
    "cdyn_batch_cluster_minverse": (_int, [_H, _HP, _int, _int, _int, _D, _int, _D, _int, _I]),
    # ---- Contacts: frictional contact and time stepping with the loops kept exact ----------------
    "cdyn_contact_settings_default": (_int, [C.POINTER(ContactSettings)]),
    "cdyn_contact_problem_create": (_int, [_H, _HP]),
    "cdyn_contact_problem_free": (_int, [_H]),
    "cdyn_contact_problem_last_error": (_str, [_H]),
    "cdyn_contact_problem_add_bilateral": (_int, [_H, _H]),
    "cdyn_contact_problem_set_ground": (_int, [_H, _D, _int, _double]),
    "cdyn_contact_problem_add_foot": (_int, [_H, _str, _int, _D, _int, _double, _double, _I]),
    "cdyn_contact_problem_add_point": (_int, [_H, _str, _int, _D, _int, _I]),
    "cdyn_contact_problem_add_patch_foot": (_int, [_H, _str, _int, _D, _int, _double, _double,
                                                   _double, _double, _I]),
    "cdyn_contact_problem_add_patch_point": (_int, [_H, _str, _int, _D, _int, _int, _I]),
    "cdyn_contact_problem_sizes": (_int, [_H, _I, _I, _I]),
    "cdyn_contact_workspace_create": (_int, [_H, _HP]),
    "cdyn_contact_workspace_free": (_int, [_H]),
    "cdyn_contact_workspace_last_error": (_str, [_H]),
    "cdyn_contact_workspace_reset": (_int, [_H, _H]),
    "cdyn_contact_set_caller": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    "cdyn_contact_set_caller_patch": (_int, [_H, _H, _D, _int, _D, _int]),
    "cdyn_contact_frames": (_int, [_H, _H, _D, _int, _D, _int, _D, _int]),
    "cdyn_contact_solve": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, C.POINTER(ContactSettings),
                                  _D, _int, C.POINTER(ContactReport)]),
    "cdyn_contact_step": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, C.POINTER(ContactSettings),
                                 _D, _int, _D, _int, _D, _int, C.POINTER(ContactReport)]),
    "cdyn_batch_contact_rollout": (_int, [_H, _HP, _int, _int, _int, C.POINTER(ContactSettings), _D,
                                          _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                          C.POINTER(ContactReport), _I]),
    "cdyn_pool_contact_rollout": (_int, [_H, _H, _HP, _int, _int, _int, C.POINTER(ContactSettings),
                                         _D, _int, _D, _int, _D, _int, _D, _int, _D, _int, _D, _int,
                                         C.POINTER(ContactReport), _I]),
    # ---- Constrained-dynamics derivatives (constrained derivative workspaces; compute function) --
    "cdyn_constrained_derivative_workspace_create": (_int, [_H, _HP]),
    "cdyn_constrained_derivative_workspace_free": (_int, [_H]),
    "cdyn_constrained_derivative_workspace_last_error": (_str, [_H]),
    "cdyn_constrained_dynamics_derivatives": (_int, [_H, _H, _D, _int, _D, _int, _D, _int, _D, _int,
                                                     _double, _D, _int, _D, _int, _D, _D, _D, _int,
                                                     _D, _D, _D, _int, _I]),
}
