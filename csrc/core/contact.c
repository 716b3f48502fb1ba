/* contact.c - Cundall-Strack spring-dashpot contacts (see contact.h). */
#include "contact.h"

#include <math.h>

void ts_contact_coefficients(const ts_contact_law *law, double m_eff, double *k, double *c)
{
    double ln_e = log(law->restitution), t_c = law->contact_time;
    *k = m_eff / (t_c * t_c) * (M_PI * M_PI + ln_e * ln_e);   /* eq. A-9 */
    *c = -2.0 * m_eff / t_c * ln_e;                          /* eq. A-10, with the oscillator's factor 2 */
}

ts_contact_result ts_contact_force(const ts_contact_law *law, double k, double c, double d_n, ts_vec3 u_n,
                                   ts_vec3 v_c, double dt, ts_vec3 *d_t)
{
    double v_n = ts_v3_dot(v_c, u_n);                        /* eq. A-2; approaching when < 0 */
    ts_vec3 v_t = ts_v3_sub(v_c, ts_v3_scale(u_n, v_n));      /* eq. A-3 */
    /* eq. A-7, d_n' = -v_n. Not clamped at zero: the brief pull of the
     * dashpot as a pair separates is what makes the rebound exactly e_n
     * (tests/c/test_sand.c); pairs at rest have no dashpot force at all. */
    double F_n = k * d_n - c * v_n;

    /* keep the history in the tangent plane as the contact rolls, at its length */
    double len2 = ts_v3_dot(*d_t, *d_t);
    if (len2 > 0.0) {
        ts_vec3 dt_plane = ts_v3_sub(*d_t, ts_v3_scale(u_n, ts_v3_dot(*d_t, u_n)));
        double plane2 = ts_v3_dot(dt_plane, dt_plane);
        *d_t = plane2 > 0.0 ? ts_v3_scale(dt_plane, sqrt(len2 / plane2)) : ts_v3(0, 0, 0);
    }
    *d_t = ts_v3_add(*d_t, ts_v3_scale(v_t, dt));               /* eq. A-4 */

    ts_vec3 F_t = ts_v3_add(ts_v3_scale(*d_t, k), ts_v3_scale(v_t, c)); /* eq. A-8 */
    double F_t2 = ts_v3_dot(F_t, F_t), limit = law->friction * fabs(F_n);
    if (F_t2 > limit * limit) { /* sliding, eq. A-6: the spring holds only what friction allows */
        F_t = ts_v3_scale(F_t, limit / sqrt(F_t2));
        *d_t = ts_v3_scale(ts_v3_sub(F_t, ts_v3_scale(v_t, c)), 1.0 / k);
    }
    ts_contact_result r;
    r.tangential = F_t;
    r.force = ts_v3_add(ts_v3_scale(u_n, -F_n), F_t);         /* eq. A-5 */
    return r;
}

ts_contact_result ts_contact_force_dashpot(const ts_contact_law *law, double k, double c, double d_n, ts_vec3 u_n,
                                           ts_vec3 v_c)
{
    double v_n = ts_v3_dot(v_c, u_n);
    ts_vec3 v_t = ts_v3_sub(v_c, ts_v3_scale(u_n, v_n));
    double F_n = k * d_n - c * v_n;                          /* eq. 5 */
    ts_vec3 F_t = ts_v3_scale(v_t, c);                       /* eq. 6 (sign: on body 1, along body 2's motion) */
    double F_t2 = ts_v3_dot(F_t, F_t), limit = law->friction * fabs(F_n);
    if (F_t2 > limit * limit)
        F_t = ts_v3_scale(F_t, limit / sqrt(F_t2));
    ts_contact_result r;
    r.tangential = F_t;
    r.force = ts_v3_add(ts_v3_scale(u_n, -F_n), F_t);        /* eq. 4 */
    return r;
}
