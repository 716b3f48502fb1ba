/* sand_binding.c - the sand solver from Python:
 *
 *   sand_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start,
 *             max_substeps=1000, progress=None, compression=1,
 *             checkpoint_seconds=30) -> stats
 *
 * settings: dict with the fields of ts_sand_params; objects: list of dicts
 * (name, role 0 bed / 1 object, vertices (N,3) float32 world at frame_start,
 * triangles (M,3) int32, motion (F,7) float64 or None for keyframed objects,
 * density, velocity, angular_velocity, origin, rotation). When first_frame
 * is after frame_start the state is restored from DIR/state/checkpoint.tspf.
 * tsubu/effects/sand.py builds these from a scene description. */
#include "run_binding.h"

#include "core/sand.h"

static int read_params(PyObject *d, ts_sand_params *p)
{
    double max_elements, seed;
    if (tsubu_dict_double(d, "x0", &p->x0) || tsubu_dict_double(d, "y0", &p->y0) ||
        tsubu_dict_double(d, "cell_size", &p->cell_size) || tsubu_dict_int(d, "nx", &p->nx) ||
        tsubu_dict_int(d, "ny", &p->ny) || tsubu_dict_double(d, "noise", &p->noise) ||
        tsubu_dict_double(d, "element_radius", &p->element_radius) ||
        tsubu_dict_double(d, "bulk_density", &p->bulk_density) ||
        tsubu_dict_int(d, "grains_per_element", &p->grains_per_element) ||
        tsubu_dict_double(d, "friction", &p->friction) || tsubu_dict_double(d, "restitution", &p->restitution) ||
        tsubu_dict_double(d, "contact_time", &p->contact_time) ||
        tsubu_dict_double(d, "steps_per_contact", &p->steps_per_contact) ||
        tsubu_dict_vec(d, "gravity", p->gravity, 3) || tsubu_dict_double(d, "dem_depth", &p->dem_depth) ||
        tsubu_dict_double(d, "split_speed", &p->split_speed) || tsubu_dict_double(d, "resting_gap", &p->resting_gap) ||
        tsubu_dict_double(d, "cone_angle", &p->cone_angle) || tsubu_dict_double(d, "grow_force", &p->grow_force) ||
        tsubu_dict_double(d, "rest_force", &p->rest_force) || tsubu_dict_double(d, "rest_speed", &p->rest_speed) ||
        tsubu_dict_int(d, "smoothing", &p->smoothing) || tsubu_dict_double(d, "max_elements", &max_elements) ||
        tsubu_dict_double(d, "seed", &seed))
        return -1;
    p->max_elements = (long)max_elements;
    p->seed = (uint64_t)seed;
    return 0;
}

static int read_object(PyObject *d, void *object, PyObject *keep)
{
    ts_sand_object *o = object;
    int role;
    if (tsubu_read_object_input(d, keep, &o->in) < 0 || tsubu_dict_int(d, "role", &role))
        return -1;
    o->role = (ts_sand_role)role;
    return 0;
}

static int read_params_at(PyObject *settings, void *params, int frame_start, double fps)
{
    ts_sand_params *p = params;
    if (read_params(settings, p) < 0)
        return -1;
    p->frame_start = frame_start;
    p->fps = fps;
    return 0;
}

static ts_status restore_sand(void *state, const ts_frame *cp, ts_error *err)
{
    return ts_sand_restore(state, cp, err);
}

static PyObject *stats_dict(const void *state)
{
    const ts_sand *s = state;
    ts_sand_stats st;
    ts_sand_get_stats(s, &st);
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:l}", "elements", (Py_ssize_t)st.elements,
                         "airborne", (Py_ssize_t)st.airborne, "on_objects", (Py_ssize_t)st.on_objects,
                         "region_columns", (Py_ssize_t)st.region_columns, "max_elements_seen",
                         (Py_ssize_t)st.max_elements_seen, "volume_bed", st.volume_bed, "volume_elements",
                         st.volume_elements, "volume_airborne", st.volume_airborne, "volume_lost", st.volume_lost,
                         "peak_airborne_volume", st.peak_airborne_volume, "max_speed", st.max_speed, "dem_depth",
                         st.dem_depth, "steps", st.steps);
}

static ts_status create_sand(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_sand_create((ts_sand **)state, params, objects, count, err);
}

static void destroy_sand(void *state)
{
    ts_sand_destroy(state);
}

static const tsubu_solver_binding SAND = {
    &ts_sand_ops, sizeof(ts_sand_params), sizeof(ts_sand_object), 1000, read_params_at, read_object,
    create_sand, restore_sand, destroy_sand, stats_dict,
};

static PyObject *sand_bake(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return tsubu_bake(&SAND, args, kw);
}

PyMethodDef tsubu_sand_methods[] = {
    {"sand_bake", (PyCFunction)(void (*)(void))sand_bake, METH_VARARGS | METH_KEYWORDS,
     "sand_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start, "
     "max_substeps=1000, progress=None, compression=1, checkpoint_seconds=30) -> stats dict\n\nBake the sand effect (see "
     "tsubu/effects/sand.py, which builds the arguments from a scene description)."},
    {NULL, NULL, 0, NULL},
};
