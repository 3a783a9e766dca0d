#version 450
// Desktop GLSL 450 (parsed by naga directly, no rewrite): Blinn-Phong with
// a uniform block, a helper function and an early return.
layout(location = 0) in vec3 normal;
layout(location = 1) in vec3 eye;
layout(location = 0) out vec4 colour;
layout(set = 0, binding = 0) uniform Light {
    vec3 direction;
    float shininess;
    vec4 tint;
};

float lambert(vec3 n, vec3 l) {
    float d = dot(n, l);
    if (d <= 0.0) {
        return 0.0;
    }
    return d;
}

void main() {
    vec3 n = normalize(normal);
    vec3 l = normalize(direction);
    vec3 h = normalize(l + normalize(eye));
    float diffuse = lambert(n, l);
    float spec = pow(max(dot(n, h), 0.001), shininess);
    colour = vec4(tint.rgb * diffuse + vec3(spec), tint.a);
}
